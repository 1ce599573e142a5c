#pragma once

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "cert_reloader.hpp"
#include "cluster_view.hpp"
#include "config.hpp"
#include "log.hpp"
#include "metrics.hpp"
#include "readiness.hpp"
#include "routes.hpp"

namespace mdadmit::server {

// The network shell: one io_context per I/O thread, each with its own SO_REUSEPORT TLS
// listener (the kernel spreads connections across them; no locks on the request path), and
// a control thread for signals, certificate reloads and shutdown.
class Server {
  public:
    Server(const Config& config, const Routes& routes, Readiness& readiness, Metrics& metrics,
           const Log& log);
    ~Server();

    // Loads the certificate, binds the listeners and starts the threads.
    rules::Result<bool> start();
    unsigned short tls_port() const { return tls_port_; }
    std::optional<unsigned short> health_port() const { return health_port_; }

    // What SIGTERM does: not ready at once, serve for the shutdown delay, stop accepting,
    // answer in-flight requests with Connection: close, close idle connections, stop.
    void begin_shutdown();
    // Called once when shutdown begins (from the thread that began it), before the shutdown
    // delay: for what should hand over while the process still serves. Set before start().
    void on_shutdown(std::function<void()> hook) { shutdown_hooks_.push_back(std::move(hook)); }
    // Also handle SIGTERM and SIGINT that way; a second signal exits at once.
    void handle_signals();
    // The control thread's executor: signals, certificate reloads, the cluster cache.
    boost::asio::any_io_executor control_executor();
    // Where a Pod's ModelDeployment is read from (before start()).
    void read_cluster_from(const ClusterView* cluster);
    // Blocks until the server has stopped; true when it drained within the drain timeout.
    bool wait();
    // Stops the threads at once, without draining, and waits for them. What the server's
    // threads hold stays in place until it is destroyed.
    void stop();

  private:
    struct Worker;
    boost::asio::awaitable<void> accept_loop(Worker& worker,
                                             boost::asio::ip::tcp::acceptor& acceptor, bool tls);
    void stop_accepting_and_drain();
    void check_drained(std::chrono::steady_clock::time_point give_up);
    void finish(bool drained);

    const Config& config_;
    const Routes& routes_;
    const ClusterView* cluster_ = nullptr;
    Readiness& readiness_;
    Metrics& metrics_;
    const Log& log_;
    boost::asio::io_context control_{1};
    std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>>
        control_guard_;
    CertificateStore certificates_;
    std::unique_ptr<CertReloader> reloader_;
    std::vector<std::unique_ptr<Worker>> workers_;
    std::atomic<std::size_t> open_connections_{0};
    std::thread control_thread_;
    boost::asio::steady_timer shutdown_timer_{control_};
    std::optional<boost::asio::signal_set> signals_;
    std::atomic<bool> shutdown_started_{false};
    std::vector<std::function<void()>> shutdown_hooks_;
    std::atomic<bool> drained_{true};
    unsigned short tls_port_ = 0;
    std::optional<unsigned short> health_port_;
};

}  // namespace mdadmit::server
