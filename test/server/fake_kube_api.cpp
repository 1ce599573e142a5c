#include "fake_kube_api.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

namespace mdadmit::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

FakeKubeApi::FakeKubeApi(std::string token) : token_(std::move(token)) {
    const std::string directory = testing::TempDir();
    const std::string prefix = directory + "/fake-kube-" + std::to_string(::getpid()) + "-" +
                               std::to_string(reinterpret_cast<std::uintptr_t>(this));
    ca_file_ = prefix + "-ca.crt";
    cert_file_ = prefix + "-tls.crt";
    key_file_ = prefix + "-tls.key";
    const PemPair serving = ca_.issue("kubernetes.default.svc");
    write_file(ca_file_, ca_.pem().certificate);
    write_file(cert_file_, serving.certificate);
    write_file(key_file_, serving.key);
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address);
    ::listen(listener_, 64);
    socklen_t length = sizeof address;
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { run(); });
}

FakeKubeApi::~FakeKubeApi() {
    stopping_ = true;
    ::shutdown(listener_, SHUT_RDWR);
    ::close(listener_);
    thread_.join();
}

void FakeKubeApi::serve(const std::string& path, const std::string& json_body) {
    const std::lock_guard lock(mutex_);
    fixtures_[path] = json_body;
}

void FakeKubeApi::set_token(const std::string& token) {
    const std::lock_guard lock(mutex_);
    token_ = token;
}

int FakeKubeApi::requests(const std::string& path) const {
    const std::lock_guard lock(mutex_);
    const auto it = requests_.find(path);
    return it == requests_.end() ? 0 : it->second;
}

void FakeKubeApi::run() {
    asio::ssl::context context(asio::ssl::context::tls_server);
    context.use_certificate_chain_file(cert_file_);
    context.use_private_key_file(key_file_, asio::ssl::context::pem);
    asio::io_context io;
    while (!stopping_) {
        const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
        if (client < 0) {
            return;
        }
        // One request per connection, as the client asks (Connection: close).
        asio::ip::tcp::socket socket(io, asio::ip::tcp::v4(), client);
        beast::ssl_stream<asio::ip::tcp::socket> stream(std::move(socket), context);
        beast::error_code ec;
        stream.handshake(asio::ssl::stream_base::server, ec);
        if (ec) {
            continue;
        }
        beast::flat_buffer buffer;
        http::request<http::string_body> request;
        http::read(stream, buffer, request, ec);
        if (ec) {
            continue;
        }
        const std::string path(request.target());
        http::response<http::string_body> response{http::status::ok, 11};
        response.set(http::field::content_type, "application/json");
        {
            const std::lock_guard lock(mutex_);
            ++requests_[path];
            if (request[http::field::authorization] != "Bearer " + token_) {
                response.result(http::status::unauthorized);
                response.body() = R"({"kind": "Status", "message": "Unauthorized", "code": 401})";
            } else if (const auto it = fixtures_.find(path); it != fixtures_.end()) {
                response.body() = it->second;
            } else {
                response.result(http::status::not_found);
                response.body() = R"({"kind": "Status", "message": "not found", "code": 404})";
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_.load()));
        response.keep_alive(false);
        response.prepare_payload();
        http::write(stream, response, ec);
        stream.shutdown(ec);
    }
}

}  // namespace mdadmit::test
