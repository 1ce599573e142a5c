#pragma once

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <chrono>
#include <functional>
#include <list>
#include <memory>

#include "cluster_view.hpp"
#include "log.hpp"
#include "metrics.hpp"
#include "routes.hpp"

namespace mdadmit::server {

struct SessionTimeouts {
    std::chrono::milliseconds handshake;
    std::chrono::milliseconds header;
    std::chrono::milliseconds body;
    std::chrono::milliseconds idle;
    std::chrono::milliseconds write;
};

// The open connections of one I/O thread. Used only from that thread's io_context, so it
// needs no lock. Draining closes the idle ones and tells the busy ones to close after
// their answer.
class SessionRegistry {
  public:
    struct Entry {
        std::function<void()> cancel;  // ends the connection's pending read
        bool idle = false;
    };
    using Handle = std::list<Entry>::iterator;

    template <typename Stream>
    Handle add(Stream& stream) {
        return entries_.insert(entries_.end(), Entry{[&stream] { stream.cancel(); }, false});
    }
    void remove(Handle handle) { entries_.erase(handle); }
    void drain();
    bool draining() const { return draining_; }
    std::size_t size() const { return entries_.size(); }

  private:
    std::list<Entry> entries_;
    bool draining_ = false;
};

// What a session needs from the server around it.
struct SessionEnvironment {
    const Routes& routes;
    const Log& log;
    Metrics& metrics;
    SessionTimeouts timeouts;
    SessionRegistry& registry;
    std::atomic<std::size_t>& open_connections;
    // Set when shutdown begins: answers carry Connection: close from then on.
    const std::atomic<bool>& closing;
    // Where a Pod's ModelDeployment is read from; null: nowhere (Pods admitted unchanged).
    const ClusterView* cluster = nullptr;
};

// Serves one accepted connection until the client leaves, a deadline passes, or the server
// drains. Never throws.
boost::asio::awaitable<void> serve_tls(boost::asio::ip::tcp::socket socket,
                                       std::shared_ptr<boost::asio::ssl::context> context,
                                       SessionEnvironment& env);
boost::asio::awaitable<void> serve_plain(boost::asio::ip::tcp::socket socket,
                                         SessionEnvironment& env);

}  // namespace mdadmit::server
