#include "kube_client.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
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
// An API object larger than this is not a ModelDeployment or an InstanceType list we can use.
constexpr std::size_t response_limit = 16 * 1024 * 1024;

std::string read_token(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    std::string token = text.str();
    while (!token.empty() &&
           (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) {
        token.pop_back();
    }
    return token;
}

asio::awaitable<KubeResponse> fetch(const KubeSettings& settings, asio::ssl::context& context,
                                    std::string path,
                                    std::chrono::steady_clock::time_point deadline) {
    auto executor = co_await asio::this_coro::executor;
    KubeResponse out;
    asio::ip::tcp::resolver resolver(executor);
    auto [resolve_ec, endpoints] =
        co_await resolver.async_resolve(settings.host, std::to_string(settings.port), use_tuple);
    if (resolve_ec) {
        out.error = "resolving " + settings.host + ": " + resolve_ec.message();
        co_return out;
    }
    beast::ssl_stream<beast::tcp_stream> stream(executor, context);
    const std::string& server_name =
        settings.server_name.empty() ? settings.host : settings.server_name;
    SSL_set_tlsext_host_name(stream.native_handle(), server_name.c_str());
    stream.set_verify_callback(asio::ssl::host_name_verification(server_name));
    beast::tcp_stream& tcp = beast::get_lowest_layer(stream);
    tcp.expires_at(deadline);
    auto [connect_ec, endpoint] = co_await tcp.async_connect(endpoints, use_tuple);
    if (connect_ec) {
        out.error = "connecting to " + settings.host + ": " + connect_ec.message();
        co_return out;
    }
    auto [handshake_ec] =
        co_await stream.async_handshake(asio::ssl::stream_base::client, use_tuple);
    if (handshake_ec) {
        out.error = "TLS with the API server: " + handshake_ec.message();
        co_return out;
    }
    http::request<http::empty_body> request{http::verb::get, path, 11};
    request.set(http::field::host, server_name);
    request.set(http::field::accept, "application/json");
    request.set(http::field::user_agent, "mdadmit");
    request.set(http::field::authorization, "Bearer " + read_token(settings.token_file));
    request.keep_alive(false);
    auto [write_ec, written] = co_await http::async_write(stream, request, use_tuple);
    if (write_ec) {
        out.error = "sending to the API server: " + write_ec.message();
        co_return out;
    }
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(response_limit);
    auto [read_ec, read] = co_await http::async_read(stream, buffer, parser, use_tuple);
    if (read_ec) {
        out.error = "reading from the API server: " + read_ec.message();
        co_return out;
    }
    out.status = static_cast<int>(parser.get().result_int());
    out.body = std::move(parser.get().body());
    co_return out;
}

}  // namespace

rules::Result<std::unique_ptr<KubeClient>> KubeClient::create(KubeSettings settings) {
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
    return std::unique_ptr<KubeClient>(new KubeClient(std::move(settings), std::move(context)));
}

KubeClient::KubeClient(KubeSettings settings, std::unique_ptr<asio::ssl::context> context)
    : settings_(std::move(settings)), context_(std::move(context)) {}

KubeClient::~KubeClient() = default;

KubeResponse KubeClient::get(std::string_view path,
                             std::chrono::steady_clock::time_point deadline) const {
    asio::io_context io{1};
    KubeResponse out;
    asio::co_spawn(io, fetch(settings_, *context_, std::string(path), deadline),
                   [&out](std::exception_ptr failure, KubeResponse response) {
                       if (failure) {
                           out.error = "Kubernetes API request failed";
                           return;
                       }
                       out = std::move(response);
                   });
    io.run();
    if (out.status == 0 && out.error.empty()) {
        out.error = "no answer from the API server before the deadline";
    }
    return out;
}

}  // namespace mdadmit::server
