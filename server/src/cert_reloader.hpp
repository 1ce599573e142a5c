#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "metrics.hpp"
#include "tls_context.hpp"

namespace mdadmit::server {

// The TLS context new connections use. A connection keeps the context it started with,
// so a reload never touches a connection in flight.
class CertificateStore {
  public:
    std::shared_ptr<boost::asio::ssl::context> current() const {
        const std::lock_guard lock(mutex_);
        return context_;
    }
    void replace(std::shared_ptr<boost::asio::ssl::context> context) {
        const std::lock_guard lock(mutex_);
        context_ = std::move(context);
    }

  private:
    mutable std::mutex mutex_;
    std::shared_ptr<boost::asio::ssl::context> context_;
};

// Reloads the certificate, key and client CA when their files change. It watches the
// directories (a Kubernetes Secret volume swaps a `..data` symlink, which ends a watch on
// the file itself) and also polls. A new context replaces the old only when the files
// parse and the key matches; otherwise the old one keeps serving and the error is counted.
class CertReloader {
  public:
    using Log = std::function<void(bool ok, const std::string& message)>;

    CertReloader(boost::asio::io_context& io, TlsSettings settings, CertificateStore& store,
                 Metrics& metrics, std::chrono::milliseconds poll_interval, Log log);
    ~CertReloader();

    // Loads the files now; an Error if they cannot be served (used at start-up).
    rules::Result<bool> load_initial();
    void start();
    void stop();

  private:
    void check();
    std::string fingerprint() const;
    rules::Result<bool> load(const std::string& fingerprint);
    void watch_directories();
    void read_events();
    void schedule_poll();

    boost::asio::io_context& io_;
    TlsSettings settings_;
    CertificateStore& store_;
    Metrics& metrics_;
    std::chrono::milliseconds poll_interval_;
    Log log_;
    std::string loaded_fingerprint_;
    std::string refused_fingerprint_;
    boost::asio::steady_timer poll_timer_;
    boost::asio::steady_timer settle_timer_;
    std::unique_ptr<boost::asio::posix::stream_descriptor> inotify_;
    std::array<char, 4096> event_buffer_{};
    bool stopped_ = false;
};

}  // namespace mdadmit::server
