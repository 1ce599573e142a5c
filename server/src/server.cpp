#include "server.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <csignal>
#include <cstdlib>
#include <optional>

#include "batch_sender.hpp"
#include "session.hpp"

namespace mdadmit::server {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
constexpr std::chrono::milliseconds drain_check_interval{50};

rules::Result<tcp::acceptor> bind(asio::io_context& io, const ListenAddress& address,
                                  unsigned short port, bool reuse_port) {
    boost::system::error_code ec;
    const auto ip = asio::ip::make_address(address.host, ec);
    if (ec) {
        return rules::Error{"listen address \"" + address.host + "\": " + ec.message()};
    }
    const tcp::endpoint endpoint(ip, port);
    tcp::acceptor acceptor(io);
    acceptor.open(endpoint.protocol(), ec);
    if (!ec) {
        acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    }
    if (!ec && reuse_port) {
        const int on = 1;
        if (::setsockopt(acceptor.native_handle(), SOL_SOCKET, SO_REUSEPORT, &on, sizeof on) != 0) {
            ec.assign(errno, boost::system::system_category());
        }
    }
    if (!ec) {
        // Linux gives an accepted socket the listener's TCP_NODELAY: one system call per
        // listener instead of one per connection. An answer written as several TLS records
        // leaves at once rather than after the client's delayed ACK.
        acceptor.set_option(tcp::no_delay(true), ec);
    }
    if (!ec) {
        acceptor.bind(endpoint, ec);
    }
    if (!ec) {
        acceptor.listen(asio::socket_base::max_listen_connections, ec);
    }
    if (ec) {
        return rules::Error{"cannot listen on " + address.host + ":" + std::to_string(port) + ": " +
                            ec.message()};
    }
    return acceptor;
}

// The per-thread listeners share their port through SO_REUSEPORT, which would as readily let
// this process join another's listeners on that port and take half its connections. A socket
// without SO_REUSEPORT cannot bind where any process listens, so one is bound and closed
// first: the port is free, or the start fails naming it.
std::optional<std::string> port_held_elsewhere(const ListenAddress& address) {
    boost::system::error_code ec;
    const tcp::endpoint endpoint(asio::ip::make_address(address.host, ec), address.port);
    if (ec) {
        return std::nullopt;  // the listener's own bind names a bad address
    }
    asio::io_context io;
    tcp::acceptor probe(io);
    probe.open(endpoint.protocol(), ec);
    if (!ec) {
        probe.set_option(asio::socket_base::reuse_address(true), ec);
    }
    if (!ec) {
        probe.bind(endpoint, ec);
    }
    if (ec == asio::error::address_in_use) {
        return "cannot listen on " + address.host + ":" + std::to_string(address.port) +
               ": another process listens there";
    }
    return std::nullopt;
}

}  // namespace

// Declaration order matters: the io_context is destroyed before the registry and
// environment its suspended sessions still use, and after the acceptors bound to it.
struct Server::Worker {
    SessionRegistry registry;
    std::optional<SessionEnvironment> environment;
    asio::io_context io{1};
    std::optional<asio::executor_work_guard<asio::io_context::executor_type>> guard{
        asio::make_work_guard(io)};
    std::optional<tcp::acceptor> tls_acceptor;
    std::optional<tcp::acceptor> health_acceptor;
    std::thread thread;
};

Server::Server(const Config& config, const Routes& routes, Readiness& readiness, Metrics& metrics,
               const Log& log)
    : config_(config), routes_(routes), readiness_(readiness), metrics_(metrics), log_(log) {
    // A reader that has gone (a client, the pipe the log goes to) must be a write error, not a
    // signal that ends the process.
    std::signal(SIGPIPE, SIG_IGN);
}

Server::~Server() {
    stop();
}

void Server::stop() {
    if (!control_thread_.joinable()) {
        return;
    }
    finish(false);
    wait();
}

rules::Result<bool> Server::start() {
    reloader_ = std::make_unique<CertReloader>(
        control_,
        TlsSettings{config_.cert_file, config_.key_file, config_.client_ca_file,
                    config_.tls13_only},
        certificates_, metrics_, config_.cert_poll_interval,
        [this](bool ok, const std::string& message) {
            log_.write(ok ? LogLevel::info : LogLevel::error, message);
        });
    if (auto loaded = reloader_->load_initial(); !loaded) {
        return loaded.error();
    }
    readiness_.certificate_loaded = true;

    const SessionTimeouts timeouts{config_.handshake_timeout, config_.header_timeout,
                                   config_.body_timeout, config_.idle_timeout,
                                   config_.write_timeout};
    if (config_.listen.port != 0) {
        if (auto held = port_held_elsewhere(config_.listen)) {
            return rules::Error{*held};
        }
    }
    for (unsigned i = 0; i < config_.worker_threads(); ++i) {
        auto worker = std::make_unique<Worker>();
        worker->environment.emplace(SessionEnvironment{routes_, log_, metrics_, timeouts,
                                                       worker->registry, open_connections_,
                                                       readiness_.shutting_down, cluster_});
        // The first listener may pick the port (port 0); the others share the one it got.
        auto acceptor = bind(worker->io, config_.listen,
                             tls_port_ != 0 ? tls_port_ : config_.listen.port, true);
        if (!acceptor) {
            return acceptor.error();
        }
        tls_port_ = acceptor.value().local_endpoint().port();
        worker->tls_acceptor.emplace(std::move(acceptor).value());
        workers_.push_back(std::move(worker));
    }
    if (config_.health_listen) {
        auto acceptor =
            bind(workers_.front()->io, *config_.health_listen, config_.health_listen->port, false);
        if (!acceptor) {
            return acceptor.error();
        }
        health_port_ = acceptor.value().local_endpoint().port();
        workers_.front()->health_acceptor.emplace(std::move(acceptor).value());
    }

    for (auto& worker : workers_) {
        asio::co_spawn(worker->io, accept_loop(*worker, *worker->tls_acceptor, true),
                       asio::detached);
        if (worker->health_acceptor) {
            asio::co_spawn(worker->io, accept_loop(*worker, *worker->health_acceptor, false),
                           asio::detached);
        }
        worker->thread = std::thread([&io = worker->io] { io.run(); });
    }
    control_guard_.emplace(asio::make_work_guard(control_));
    reloader_->start();
    control_thread_ = std::thread([this] { control_.run(); });
    readiness_.tls_accepting = true;
    log_.write(LogLevel::info, "serving",
               {{"tls_port", std::to_string(tls_port_)},
                {"health_port", health_port_ ? std::to_string(*health_port_) : "off"},
                {"threads", std::to_string(workers_.size())},
                // Whether the answers of one turn of a thread's event loop go to the kernel in
                // one system call (io_uring) or one each (a seccomp profile or a kernel that
                // refuses io_uring): the second needs more CPU per answer under load.
                {"answers_sent", BatchSender::offered() ? "together" : "one by one"}});
    return true;
}

asio::awaitable<void> Server::accept_loop(Worker& worker, tcp::acceptor& acceptor, bool tls) {
    for (;;) {
        auto [ec, socket] = co_await acceptor.async_accept(use_tuple);
        if (ec == asio::error::operation_aborted || !acceptor.is_open()) {
            co_return;
        }
        if (ec) {
            // Out of descriptors or a reset before accept: wait a moment, keep serving.
            log_.write(LogLevel::warn, "accept failed", {{"error", ec.message()}});
            asio::steady_timer pause(worker.io, std::chrono::milliseconds(50));
            co_await pause.async_wait(use_tuple);
            continue;
        }
        if (open_connections_.fetch_add(1, std::memory_order_relaxed) >= config_.max_connections) {
            open_connections_.fetch_sub(1, std::memory_order_relaxed);
            metrics_.count_connection_rejected();
            continue;  // the socket closes as it goes out of scope
        }
        if (tls) {
            asio::co_spawn(
                worker.io,
                serve_tls(std::move(socket), certificates_.current(), *worker.environment),
                asio::detached);
        } else {
            asio::co_spawn(worker.io, serve_plain(std::move(socket), *worker.environment),
                           asio::detached);
        }
    }
}

asio::any_io_executor Server::control_executor() {
    return control_.get_executor();
}

void Server::read_cluster_from(const ClusterView* cluster) {
    cluster_ = cluster;
}

void Server::handle_signals() {
    asio::post(control_, [this] {
        signals_.emplace(control_, SIGTERM, SIGINT);
        signals_->async_wait([this](boost::system::error_code ec, int signal) {
            if (ec) {
                return;
            }
            log_.write(LogLevel::info, "shutdown requested", {{"signal", std::to_string(signal)}});
            begin_shutdown();
            signals_->async_wait([this](boost::system::error_code second_ec, int) {
                if (!second_ec) {
                    log_.write(LogLevel::warn, "second signal: exiting at once");
                    std::_Exit(1);
                }
            });
        });
    });
}

void Server::begin_shutdown() {
    if (shutdown_started_.exchange(true)) {
        return;
    }
    readiness_.shutting_down = true;
    for (const auto& hook : shutdown_hooks_) {
        hook();
    }
    asio::post(control_, [this] {
        shutdown_timer_.expires_after(config_.shutdown_delay);
        shutdown_timer_.async_wait([this](boost::system::error_code ec) {
            if (!ec) {
                stop_accepting_and_drain();
            }
        });
    });
}

void Server::stop_accepting_and_drain() {
    readiness_.tls_accepting = false;
    for (auto& worker : workers_) {
        asio::post(worker->io, [&worker = *worker] {
            boost::system::error_code ignored;
            worker.tls_acceptor->close(ignored);
            worker.registry.drain();
        });
    }
    log_.write(LogLevel::info, "stopped accepting; draining",
               {{"open_connections", std::to_string(open_connections_.load())}});
    check_drained(std::chrono::steady_clock::now() + config_.drain_timeout);
}

void Server::check_drained(std::chrono::steady_clock::time_point give_up) {
    if (open_connections_.load() == 0 || std::chrono::steady_clock::now() >= give_up) {
        finish(open_connections_.load() == 0);
        return;
    }
    shutdown_timer_.expires_after(drain_check_interval);
    shutdown_timer_.async_wait([this, give_up](boost::system::error_code ec) {
        if (!ec) {
            check_drained(give_up);
        }
    });
}

void Server::finish(bool drained) {
    drained_ = drained;
    log_.write(drained ? LogLevel::info : LogLevel::warn,
               drained ? "drained; exiting" : "drain timeout; exiting");
    for (auto& worker : workers_) {
        worker->guard.reset();
        worker->io.stop();
    }
    asio::post(control_, [this] {
        reloader_->stop();
        signals_.reset();
        control_guard_.reset();
        control_.stop();
    });
}

bool Server::wait() {
    for (auto& worker : workers_) {
        if (worker->thread.joinable()) {
            worker->thread.join();
        }
    }
    if (control_thread_.joinable()) {
        control_thread_.join();
    }
    return drained_;
}

}  // namespace mdadmit::server
