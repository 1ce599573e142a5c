#include "session.hpp"

#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <optional>

#include "mdadmit/admission/review.hpp"
#include "request_target.hpp"
#include "tls_stream.hpp"

namespace mdadmit::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
constexpr std::size_t header_limit = 16 * 1024;
// The first read of a request; the buffer grows when a request needs more.
constexpr std::size_t read_chunk = 4 * 1024;

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

http::response<http::string_body> to_beast(const HttpResponse& response, unsigned version,
                                           bool keep_alive) {
    http::response<http::string_body> out{static_cast<http::status>(response.status), version};
    out.set(http::field::server, "mdadmit");
    out.set(http::field::content_type, response.content_type);
    if (!response.allow.empty()) {
        out.set(http::field::allow, response.allow);
    }
    out.keep_alive(keep_alive);
    out.body() = response.body;
    out.prepare_payload();
    return out;
}

void log_decision(const Log& log, const admission::Outcome& decision, int status,
                  std::chrono::nanoseconds latency) {
    std::string rule_ids;
    for (const auto& id : decision.rule_ids) {
        rule_ids += (rule_ids.empty() ? "" : ",") + id;
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

// Answers a request; a Pod on /mutate first waits, without holding the thread, for its
// ModelDeployment.
asio::awaitable<HttpResponse> answer(const SessionEnvironment& env, const HttpRequest& request) {
    RouteResult result = env.routes.handle(request);
    auto* pending = std::get_if<PendingResponse>(&result);
    if (pending == nullptr) {
        co_return std::move(std::get<HttpResponse>(result));
    }
    admission::Lookup lookup{
        admission::Lookup::Status::unreadable, {}, "no source of ModelDeployments is configured"};
    if (env.cluster != nullptr) {
        lookup = co_await env.cluster->model_deployment(pending->pod.namespace_name,
                                                        pending->pod.deployment, pending->deadline);
    }
    co_return env.routes.complete(std::move(*pending), lookup);
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

template <typename Stream>
asio::awaitable<void> write_and_close(Stream& stream, SessionEnvironment& env, int status,
                                      std::string_view reason, std::string_view message) {
    HttpResponse response;
    response.status = status;
    response.body = admission::status_body(status, reason, message);
    auto beast_response = to_beast(response, 11, false);
    stream.expires_after(env.timeouts.write);
    auto [ec, bytes] = co_await http::async_write(stream, beast_response, use_tuple);
    env.metrics.observe_request({"other", status, "", "", false}, std::chrono::nanoseconds(0));
    // The rest of what the client sent stays unread: closing now could reset the connection
    // before the client has read the answer.
    if (!ec) {
        co_await discard_unread_body(stream);
    }
}

// The HTTP/1.1 keep-alive loop, the same over TLS and plain TCP.
template <typename Stream>
asio::awaitable<void> serve_http(Stream& stream, SessionEnvironment& env, ConnectionScope& scope,
                                 bool over_tls) {
    beast::flat_buffer buffer;
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

        http::request_parser<http::string_body> parser;
        parser.header_limit(header_limit);
        parser.body_limit(env.routes.options().body_limit);
        stream.expires_after(env.timeouts.header);
        auto [header_ec, header_bytes] =
            co_await http::async_read_header(stream, buffer, parser, use_tuple);
        // A Content-Length over the limit is known with the headers: answered 413 below
        // without reading the body.
        bool over_limit = header_ec == http::error::body_limit;
        if (header_ec && !over_limit) {
            if (header_ec == http::error::header_limit) {
                co_await write_and_close(stream, env, 431, "RequestHeaderFieldsTooLarge",
                                         "request headers too large");
            } else if (header_ec != beast::error::timeout &&
                       header_ec != http::error::end_of_stream && header_ec != asio::error::eof &&
                       header_ec != asio::error::operation_aborted) {
                co_await write_and_close(stream, env, 400, "BadRequest",
                                         "malformed HTTP request: " + header_ec.message());
            }
            co_return;
        }
        // The apiserver's ?timeout= also bounds how long the body may take to arrive.
        const Clock::time_point started = Clock::now();
        const auto target = parse_target(parser.get().target());
        const Clock::time_point deadline = env.routes.deadline(started, target.timeout);
        stream.expires_after(std::min<Clock::duration>(env.timeouts.body, deadline - started));
        if (!over_limit && !parser.is_done()) {
            auto [body_ec, body_bytes] =
                co_await http::async_read(stream, buffer, parser, use_tuple);
            over_limit = body_ec == http::error::body_limit;
            if (body_ec && !over_limit) {
                co_return;
            }
        }
        const auto& request = parser.get();
        HttpRequest http_request{request.method_string(),
                                 request.target(),
                                 request[http::field::content_type],
                                 request.body(),
                                 over_limit,
                                 over_tls,
                                 started};
        HttpResponse response;
        response = co_await answer(env, http_request);
        // After a cut-short body the stream cannot be read further. Once shutting down,
        // every answer tells the client to reconnect, so that few idle connections are left
        // to close when the listener stops.
        const bool keep_alive =
            request.keep_alive() && !over_limit && !env.closing.load() && !env.registry.draining();
        auto beast_response = to_beast(response, request.version(), keep_alive);
        stream.expires_after(env.timeouts.write);
        auto [write_ec, write_bytes] =
            co_await http::async_write(stream, beast_response, use_tuple);
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
