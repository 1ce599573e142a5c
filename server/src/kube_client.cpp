#include "kube_client.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <fstream>
#include <sstream>

namespace mdadmit::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
// An API answer larger than this is not a list of ModelDeployments or InstanceTypes we can
// hold; one watch event larger than this is not one object.
constexpr std::size_t response_limit = 64 * 1024 * 1024;
constexpr std::size_t read_chunk = 64 * 1024;

http::verb verb_of(KubeMethod method) {
    switch (method) {
        case KubeMethod::get:
            return http::verb::get;
        case KubeMethod::post:
            return http::verb::post;
        case KubeMethod::put:
            return http::verb::put;
        case KubeMethod::remove:
            break;
    }
    return http::verb::delete_;
}

}  // namespace

rules::Result<std::shared_ptr<KubeApi>> KubeApi::create(KubeSettings settings) {
    auto context = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
    SSL_CTX_set_min_proto_version(context->native_handle(), TLS1_2_VERSION);
    boost::system::error_code ec;
    context->load_verify_file(settings.ca_file, ec);
    if (ec) {
        return rules::Error{"Kubernetes API CA " + settings.ca_file + ": " + ec.message()};
    }
    context->set_verify_mode(asio::ssl::verify_peer);
    if (settings.host.empty()) {
        return rules::Error{
            "Kubernetes API server address unknown (KUBERNETES_SERVICE_HOST is not set)"};
    }
    return std::shared_ptr<KubeApi>(new KubeApi(std::move(settings), std::move(context)));
}

KubeApi::KubeApi(KubeSettings settings, std::unique_ptr<asio::ssl::context> context)
    : settings_(std::move(settings)), context_(std::move(context)) {}

KubeApi::~KubeApi() = default;

std::string KubeApi::token() const {
    std::ifstream in(settings_.token_file);
    std::ostringstream text;
    text << in.rdbuf();
    std::string token = text.str();
    while (!token.empty() &&
           (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) {
        token.pop_back();
    }
    return token;
}

struct KubeConnection::State {
    State(asio::any_io_executor executor, std::shared_ptr<const KubeApi> api)
        : executor(std::move(executor)), api(std::move(api)) {}

    asio::any_io_executor executor;
    std::shared_ptr<const KubeApi> api;
    std::optional<beast::ssl_stream<beast::tcp_stream>> stream;
    beast::flat_buffer buffer;
    // The response being streamed (a watch), and the bytes of its unfinished line.
    std::optional<http::response_parser<http::buffer_body>> streaming;
    std::string partial;

    std::string server_name() const {
        const KubeSettings& s = api->settings();
        return s.server_name.empty() ? s.host : s.server_name;
    }

    void close() {
        if (stream) {
            boost::system::error_code ignored;
            beast::get_lowest_layer(*stream).socket().close(ignored);
        }
        stream.reset();
        streaming.reset();
        buffer.clear();
        partial.clear();
    }

    // Connects when there is no open connection; "" on success, else what failed.
    asio::awaitable<std::string> connect(std::chrono::steady_clock::time_point deadline) {
        if (stream) {
            co_return std::string();
        }
        const KubeSettings& settings = api->settings();
        asio::ip::tcp::resolver resolver(executor);
        auto [resolve_ec, endpoints] = co_await resolver.async_resolve(
            settings.host, std::to_string(settings.port), use_tuple);
        if (resolve_ec) {
            co_return "resolving " + settings.host + ": " + resolve_ec.message();
        }
        stream.emplace(executor, api->tls());
        const std::string name = server_name();
        SSL_set_tlsext_host_name(stream->native_handle(), name.c_str());
        stream->set_verify_callback(asio::ssl::host_name_verification(name));
        beast::tcp_stream& tcp = beast::get_lowest_layer(*stream);
        tcp.expires_at(deadline);
        auto [connect_ec, endpoint] = co_await tcp.async_connect(endpoints, use_tuple);
        if (connect_ec) {
            close();
            co_return "connecting to " + settings.host + ": " + connect_ec.message();
        }
        auto [handshake_ec] =
            co_await stream->async_handshake(asio::ssl::stream_base::client, use_tuple);
        if (handshake_ec) {
            close();
            co_return "TLS with the API server: " + handshake_ec.message();
        }
        co_return std::string();
    }

    // Sends a request on a connection, opening one when needed; "" on success, else what
    // failed. A kept-alive connection the server has meanwhile closed fails on first use:
    // that request is sent once more on a new connection.
    asio::awaitable<std::string> send(KubeMethod method, const std::string& path,
                                      const std::string& body,
                                      std::chrono::steady_clock::time_point deadline) {
        streaming.reset();
        partial.clear();
        for (int attempt = 0;; ++attempt) {
            const bool reused = stream.has_value();
            if (std::string failed = co_await connect(deadline); !failed.empty()) {
                co_return failed;
            }
            http::request<http::string_body> request{verb_of(method), path, 11};
            request.set(http::field::host, server_name());
            request.set(http::field::accept, "application/json");
            if (!body.empty()) {
                request.set(http::field::content_type, "application/json");
                request.body() = body;
            }
            request.prepare_payload();
            request.set(http::field::user_agent, "mdadmit");
            request.set(http::field::authorization, "Bearer " + api->token());
            request.keep_alive(true);
            beast::get_lowest_layer(*stream).expires_at(deadline);
            auto [write_ec, written] = co_await http::async_write(*stream, request, use_tuple);
            if (!write_ec) {
                co_return std::string();
            }
            close();
            if (!reused || attempt > 0) {
                co_return "sending to the API server: " + write_ec.message();
            }
        }
    }
};

KubeConnection::KubeConnection(asio::any_io_executor executor, std::shared_ptr<const KubeApi> api)
    : state_(std::make_unique<State>(std::move(executor), std::move(api))) {}

KubeConnection::~KubeConnection() = default;

void KubeConnection::close() {
    state_->close();
}

asio::awaitable<KubeResponse> KubeConnection::get(std::string path,
                                                  std::chrono::steady_clock::time_point deadline) {
    co_return co_await request(KubeMethod::get, std::move(path), {}, deadline);
}

asio::awaitable<KubeResponse> KubeConnection::request(
    KubeMethod method, std::string path, std::string body,
    std::chrono::steady_clock::time_point deadline) {
    State& s = *state_;
    for (int attempt = 0;; ++attempt) {
        const bool reused = s.stream.has_value();
        KubeResponse out;
        out.error = co_await s.send(method, path, body, deadline);
        if (!out.error.empty()) {
            co_return out;
        }
        http::response_parser<http::string_body> parser;
        parser.body_limit(response_limit);
        auto [read_ec, read] = co_await http::async_read(*s.stream, s.buffer, parser, use_tuple);
        if (read_ec) {
            s.close();
            // The server closed a kept-alive connection just as the request went out.
            if (reused && attempt == 0 && read_ec == http::error::end_of_stream) {
                continue;
            }
            out.error = "reading from the API server: " + read_ec.message();
            co_return out;
        }
        out.status = static_cast<int>(parser.get().result_int());
        out.body = std::move(parser.get().body());
        if (!parser.get().keep_alive()) {
            s.close();
        }
        co_return out;
    }
}

asio::awaitable<KubeResponse> KubeConnection::open_stream(
    std::string path, std::chrono::steady_clock::time_point deadline) {
    State& s = *state_;
    KubeResponse out;
    out.error = co_await s.send(KubeMethod::get, path, {}, deadline);
    if (!out.error.empty()) {
        co_return out;
    }
    s.streaming.emplace();
    s.streaming->body_limit(boost::none);  // a watch runs for minutes
    auto [header_ec, read] =
        co_await http::async_read_header(*s.stream, s.buffer, *s.streaming, use_tuple);
    if (header_ec) {
        s.close();
        out.error = "reading from the API server: " + header_ec.message();
        co_return out;
    }
    out.status = static_cast<int>(s.streaming->get().result_int());
    if (out.status == 200) {
        co_return out;
    }
    // An error status: its body is a Status, read whole.
    while (auto line = co_await next_line(std::chrono::duration_cast<std::chrono::milliseconds>(
               deadline - std::chrono::steady_clock::now()))) {
        out.body += *line;
    }
    co_return out;
}

asio::awaitable<std::optional<std::string>> KubeConnection::next_line(
    std::chrono::milliseconds idle) {
    State& s = *state_;
    std::array<char, read_chunk> chunk;
    for (;;) {
        if (const auto end = s.partial.find('\n'); end != std::string::npos) {
            std::string line = s.partial.substr(0, end);
            s.partial.erase(0, end + 1);
            co_return line;
        }
        if (!s.streaming || s.streaming->is_done()) {
            std::string rest = std::move(s.partial);
            s.close();
            co_return rest.empty() ? std::nullopt : std::optional<std::string>(std::move(rest));
        }
        if (s.partial.size() > response_limit) {
            s.close();
            co_return std::nullopt;
        }
        auto& body = s.streaming->get().body();
        body.data = chunk.data();
        body.size = chunk.size();
        beast::get_lowest_layer(*s.stream).expires_after(idle);
        auto [ec, read] =
            co_await http::async_read_some(*s.stream, s.buffer, *s.streaming, use_tuple);
        s.partial.append(chunk.data(), chunk.size() - body.size);
        if (ec && ec != http::error::need_buffer) {
            s.close();
            co_return std::nullopt;
        }
    }
}

}  // namespace mdadmit::server
