#include "session.hpp"

#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <concepts>
#include <memory_resource>
#include <optional>

#include "http_response.hpp"
#include "mdadmit/admission/review.hpp"
#include "request_reader.hpp"
#include "request_target.hpp"
#include "tls_stream.hpp"

namespace mdadmit::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
// The most a connection keeps between requests for the next body and answer.
constexpr std::size_t spare_body_limit = 64 * 1024;

// Counts a connection for its whole life, including in the registry of its thread.
class ConnectionScope {
  public:
    template <typename Stream>
    ConnectionScope(SessionEnvironment& env, Stream& stream)
        : env_(env), handle_(env.registry.add(stream)) {
        env_.metrics.add_connections(1);
    }
    ~ConnectionScope() {
        env_.registry.remove(handle_);
        env_.metrics.add_connections(-1);
        env_.open_connections.fetch_sub(1, std::memory_order_relaxed);
    }
    ConnectionScope(const ConnectionScope&) = delete;
    ConnectionScope& operator=(const ConnectionScope&) = delete;
    void set_idle(bool idle) { handle_->idle = idle; }

  private:
    SessionEnvironment& env_;
    SessionRegistry::Handle handle_;
};

void log_decision(const Log& log, const admission::Outcome& decision, int status,
                  std::chrono::nanoseconds latency) {
    if (!log.enabled(LogLevel::info)) {
        return;  // nothing to format
    }
    std::string rule_ids;
    for (const auto& finding : decision.counts.findings) {
        rule_ids.append(rule_ids.empty() ? "" : ",").append(finding.rule);
    }
    const std::string latency_ms =
        std::to_string(std::chrono::duration<double, std::milli>(latency).count());
    const std::string code = std::to_string(status);
    if (decision.verdict.empty()) {
        log.write(LogLevel::info, "admission request refused",
                  {{"code", code}, {"latency_ms", latency_ms}});
        return;
    }
    log.write(LogLevel::info, "admission decision",
              {{"uid", decision.uid},
               {"operation", decision.operation},
               {"kind", decision.kind},
               {"namespace", decision.namespace_name},
               {"name", decision.name},
               {"user", decision.user},
               {"verdict", decision.verdict.empty() ? std::string_view("rejected")
                                                    : std::string_view(decision.verdict)},
               {"code", code},
               {"dry_run", decision.dry_run ? "true" : "false"},
               {"rules", rule_ids},
               {"latency_ms", latency_ms}});
}

// Answers a Pod on /mutate once its ModelDeployment is known, waiting for it without holding
// the thread.
asio::awaitable<HttpResponse> complete_pending(const SessionEnvironment& env,
                                               PendingResponse pending) {
    admission::Lookup lookup{
        admission::Lookup::Status::unreadable, {}, "no source of ModelDeployments is configured"};
    if (env.cluster != nullptr) {
        lookup = co_await env.cluster->model_deployment(pending.pod.namespace_name,
                                                        pending.pod.deployment, pending.deadline);
    }
    co_return env.routes.complete(std::move(pending), lookup);
}

// After refusing a body mid-upload, reads and discards what the client is still sending, for
// a bounded time and amount, so that closing does not reset the connection before the
// client has read the refusal (a lingering close).
template <typename Stream>
asio::awaitable<void> discard_unread_body(Stream& stream) {
    constexpr std::size_t most = 16 * 1024 * 1024;
    std::array<char, 16 * 1024> sink;
    stream.expires_after(std::chrono::seconds(2));
    for (std::size_t drained = 0; drained < most;) {
        auto [ec, bytes] = co_await stream.async_read_some(asio::buffer(sink), use_tuple);
        if (ec) {
            co_return;
        }
        drained += bytes;
    }
}

// A stream that can take bytes without waiting (TLS, while the socket has room) saves the
// round through the executor an asynchronous write costs; plain TCP (health and metrics)
// always goes through its asynchronous operations.
template <typename Stream>
concept WritesWithoutWaiting = requires(Stream& stream, asio::const_buffer bytes,
                                        beast::error_code& ec) {
    { stream.write_now(bytes, ec) } -> std::convertible_to<std::size_t>;
};

// A signature that drifts must not quietly send TLS through the slower path.
static_assert(ReadsWithoutWaiting<TlsStream> && WritesWithoutWaiting<TlsStream>);
static_assert(!ReadsWithoutWaiting<beast::tcp_stream> && !WritesWithoutWaiting<beast::tcp_stream>);

// Writes what the stream takes of `bytes` without waiting; how much.
template <typename Stream>
std::size_t write_at_once(Stream& stream, std::string_view bytes, beast::error_code& ec) {
    if constexpr (WritesWithoutWaiting<Stream>) {
        return stream.write_now(asio::buffer(bytes), ec);
    }
    return 0;
}

// A stream that can hand the answers of its thread's connections to the kernel together.
template <typename Stream>
concept GathersWrites = requires(Stream& stream, asio::const_buffer bytes, beast::error_code& ec) {
    { stream.write_gathered(bytes, ec) } -> std::convertible_to<std::size_t>;
    { Stream::gathers_writes() } -> std::convertible_to<bool>;
};
static_assert(GathersWrites<TlsStream> && !GathersWrites<beast::tcp_stream>);

template <typename Stream>
bool gathers_writes() {
    if constexpr (GathersWrites<Stream>) {
        return Stream::gathers_writes();
    }
    return false;
}

// As write_at_once, the answer gathered with the others of its thread (TlsStream).
template <typename Stream>
std::size_t write_gathered(Stream& stream, std::string_view bytes, beast::error_code& ec) {
    if constexpr (GathersWrites<Stream>) {
        return stream.write_gathered(asio::buffer(bytes), ec);
    }
    return write_at_once(stream, bytes, ec);
}

// Writes the rest of an answer, waiting for the stream to take it.
template <typename Stream>
asio::awaitable<beast::error_code> write_rest(Stream& stream, std::string_view rest,
                                              Clock::duration timeout) {
    stream.expires_after(timeout);
    auto [ec, written] = co_await asio::async_write(stream, asio::buffer(rest), use_tuple);
    co_return ec;
}

// Writes all of `bytes`: at once where the stream can take it, else waiting for it.
template <typename Stream>
asio::awaitable<beast::error_code> write_all(Stream& stream, std::string_view bytes,
                                             Clock::duration timeout) {
    beast::error_code ec;
    const std::size_t done = write_at_once(stream, bytes, ec);
    if (ec || done == bytes.size()) {
        co_return ec;
    }
    co_return co_await write_rest(stream, bytes.substr(done), timeout);
}

template <typename Stream>
asio::awaitable<void> write_and_close(Stream& stream, SessionEnvironment& env, int status,
                                      std::string_view reason, std::string_view message) {
    std::string wire;
    write_response({status, "application/json", {}, 11, false, false},
                   admission::status_body(status, reason, message), wire);
    const beast::error_code ec = co_await write_all(stream, wire, env.timeouts.write);
    env.metrics.observe_request({"other", status, "", "", false}, std::chrono::nanoseconds(0));
    // The rest of what the client sent stays unread: closing now could reset the connection
    // before the client has read the answer.
    if (!ec) {
        co_await discard_unread_body(stream);
    }
}

// A request's target and header fields take their memory from the connection's coroutine
// frame, and from the heap only past `header_memory` bytes (up to the header limit); it is all
// given back when the request is answered.
constexpr std::size_t header_memory = 2 * 1024;

// The HTTP/1.1 keep-alive loop, the same over TLS and plain TCP.
template <typename Stream>
asio::awaitable<void> serve_http(Stream& stream, SessionEnvironment& env, ConnectionScope& scope,
                                 bool over_tls) {
    beast::flat_buffer buffer;
    // Kept from one request to the next, so that a connection's requests after the first
    // reuse their memory: the body read, the answer, and the answer written.
    std::string spare_body;
    HttpResponse spare_response;
    std::string wire;
    bool first_request = true;
    for (;;) {
        if (env.registry.draining() && !first_request) {
            co_return;
        }
        if (buffer.size() == 0) {
            // Waiting for the next request: the idle timeout, except right after connecting,
            // when a client that says nothing gets only the header timeout. Only a connection
            // that has been answered counts as idle: a new one is owed its first answer.
            stream.expires_after(first_request ? env.timeouts.header : env.timeouts.idle);
            scope.set_idle(!first_request);
            auto [ec, bytes] =
                co_await stream.async_read_some(buffer.prepare(read_chunk), use_tuple);
            scope.set_idle(false);
            if (ec) {
                co_return;
            }
            buffer.commit(bytes);
        }
        first_request = false;

        std::array<std::byte, header_memory> header_bytes;
        std::pmr::monotonic_buffer_resource header_resource(header_bytes.data(),
                                                            header_bytes.size());
        RequestParser parser(std::piecewise_construct, std::forward_as_tuple(std::move(spare_body)),
                             std::make_tuple(HeaderAllocator(&header_resource)));
        parser.header_limit(header_limit);
        parser.body_limit(env.routes.options().body_limit);
        stream.expires_after(env.timeouts.header);
        // The apiserver's ?timeout= also bounds how long the body may take to arrive.
        Clock::time_point started;
        RequestTarget target;
        const ReadOutcome read = co_await read_request(stream, buffer, parser, [&] {
            started = Clock::now();
            target = parse_target(parser.get().target());
            const Clock::time_point deadline = env.routes.deadline(started, target.timeout);
            stream.expires_after(std::min<Clock::duration>(env.timeouts.body, deadline - started));
        });
        // A Content-Length over the limit is known with the headers: answered 413 below
        // without reading the body.
        const bool over_limit = read.end == ReadEnd::over_limit;
        switch (read.end) {
            case ReadEnd::complete:
            case ReadEnd::over_limit:
                break;
            case ReadEnd::header_too_large:
                co_await write_and_close(stream, env, 431, "RequestHeaderFieldsTooLarge",
                                         "request headers too large");
                co_return;
            case ReadEnd::malformed:
                co_await write_and_close(stream, env, 400, "BadRequest",
                                         "malformed HTTP request: " + read.ec.message());
                co_return;
            case ReadEnd::gone:
                co_return;
        }
        const auto& request = parser.get();
        HttpRequest http_request{request.method_string(),
                                 std::move(target),
                                 request[http::field::content_type],
                                 request.body(),
                                 over_limit,
                                 over_tls,
                                 started};
        // Only a Pod on /mutate may wait (for its ModelDeployment): every other answer is made
        // here, without a coroutine frame of its own (1.7 KB in a release build: past the
        // 1,020 bytes Asio recycles, so allocated for every request). The co_await stays in a
        // statement of its own: written inside a conditional expression, the webhook built
        // by GCC 12 aborted under load (munmap_chunk(): invalid pointer).
        RouteResult routed = env.routes.handle(http_request, std::move(spare_response));
        if (auto* pending = std::get_if<PendingResponse>(&routed)) {
            routed = co_await complete_pending(env, std::move(*pending));
        }
        HttpResponse& response = std::get<HttpResponse>(routed);
        // After a cut-short body the stream cannot be read further. Once shutting down,
        // every answer tells the client to reconnect, so that few idle connections are left
        // to close when the listener stops.
        const bool keep_alive =
            request.keep_alive() && !over_limit && !env.closing.load() && !env.registry.draining();
        write_response({response.status, response.content_type, response.allow, request.version(),
                        keep_alive, request.method() == http::verb::head},
                       response.body, wire);
        // Requests on several connections that one wait of the event loop found ready are all
        // read and judged before the first of their answers is written, and the answers then
        // leave together: a client waiting on several is woken once, not once each, and on a
        // loaded machine each such wake-up costs the writer several microseconds of system
        // time (bench/RESULTS.md, fourteenth run). Over TLS, where the kernel offers io_uring,
        // the answer is gathered with the thread's others and all go in one system call once
        // the ready handlers have run: written one send() each, each answer's wake-up of the
        // client switched the writer out before the next (twenty-third run). Otherwise the
        // answer goes to the back of the thread's queue, behind the other requests' handlers.
        // A thread with one connection has nothing to gather and writes at once, and so does
        // an answer that closes its connection: what follows it is the client's next
        // handshake, whose cost no gathering changes.
        const bool gathered = keep_alive && env.registry.size() > 1;
        const bool by_kernel = gathered && gathers_writes<Stream>();
        if (gathered && !by_kernel) {
            co_await asio::post(stream.get_executor(), asio::use_awaitable);
        }
        // As write_all, without a coroutine frame of its own when the socket takes the answer
        // at once. Asio recycles a few blocks per thread (server/CMakeLists.txt): each more in
        // use per request is a heap allocation and release.
        beast::error_code write_ec;
        const std::size_t written = by_kernel ? write_gathered(stream, wire, write_ec)
                                              : write_at_once(stream, wire, write_ec);
        if (!write_ec && written < wire.size()) {
            write_ec = co_await write_rest(stream, std::string_view(wire).substr(written),
                                           env.timeouts.write);
        }
        if (response.is_admission) {
            log_decision(env.log, response.admission, response.status, Clock::now() - started);
        } else if (response.status >= 400) {
            env.log.write(
                LogLevel::debug, "request refused",
                {{"target", request.target()}, {"code", std::to_string(response.status)}});
        }
        if (over_limit && !write_ec) {
            co_await discard_unread_body(stream);
        }
        if (write_ec || !keep_alive) {
            co_return;
        }
        // A big body's memory is given back rather than held by an idle connection.
        if (parser.get().body().capacity() <= spare_body_limit) {
            spare_body = std::move(parser.get().body());
            spare_body.clear();
        }
        if (wire.capacity() > spare_body_limit) {
            wire = std::string();
        }
        if (response.body.capacity() <= spare_body_limit) {
            spare_response = std::move(response);
        }
    }
}

}  // namespace

void SessionRegistry::drain() {
    draining_ = true;
    for (auto& entry : entries_) {
        if (entry.idle) {
            entry.cancel();
        }
    }
}

asio::awaitable<void> serve_tls(asio::ip::tcp::socket socket,
                                std::shared_ptr<asio::ssl::context> context,
                                SessionEnvironment& env) {
    std::optional<TlsStream> stream =
        TlsStream::accept(std::move(socket), context->native_handle());
    if (!stream) {
        env.open_connections.fetch_sub(1, std::memory_order_relaxed);
        env.metrics.count_tls_handshake_failure();
        env.log.write(LogLevel::warn, "TLS connection refused: OpenSSL could not set it up");
        co_return;
    }
    ConnectionScope scope(env, *stream);
    stream->expires_after(env.timeouts.handshake);
    if (auto [ec, ignored] = co_await stream->async_handshake(use_tuple); ec) {
        env.metrics.count_tls_handshake_failure();
        env.log.write(LogLevel::debug, "TLS handshake failed", {{"error", ec.message()}});
        co_return;
    }
    co_await serve_http(*stream, env, scope, true);
    stream->shutdown();
}

asio::awaitable<void> serve_plain(asio::ip::tcp::socket socket, SessionEnvironment& env) {
    beast::tcp_stream stream(std::move(socket));
    ConnectionScope scope(env, stream);
    co_await serve_http(stream, env, scope, false);
    boost::system::error_code ignored;
    stream.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
}

}  // namespace mdadmit::server
