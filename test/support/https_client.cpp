#include "https_client.hpp"

#include <openssl/ssl.h>
#include <openssl/x509.h>

namespace mdadmit::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

HttpsClient::HttpsClient(unsigned short port, const ClientOptions& options)
    : port_(port), context_(asio::ssl::context::tls_client) {
    context_.load_verify_file(options.ca_file);
    context_.set_verify_mode(asio::ssl::verify_peer);
    if (!options.client_cert_file.empty()) {
        context_.use_certificate_chain_file(options.client_cert_file);
        context_.use_private_key_file(options.client_key_file, asio::ssl::context::pem);
    }
    if (options.max_tls_version != 0) {
        SSL_CTX_set_max_proto_version(context_.native_handle(), options.max_tls_version);
    }
    if (options.min_tls_version != 0) {
        SSL_CTX_set_min_proto_version(context_.native_handle(), options.min_tls_version);
    }
    if (!options.cipher_list.empty()) {
        SSL_CTX_set_cipher_list(context_.native_handle(), options.cipher_list.c_str());
    }
    if (!options.ciphersuites.empty()) {
        SSL_CTX_set_ciphersuites(context_.native_handle(), options.ciphersuites.c_str());
    }
    if (!options.alpn.empty()) {
        SSL_CTX_set_alpn_protos(context_.native_handle(),
                                reinterpret_cast<const unsigned char*>(options.alpn.data()),
                                static_cast<unsigned>(options.alpn.size()));
    }
}

bool HttpsClient::connect() {
    stream_.emplace(io_, context_);
    beast::error_code ec;
    beast::get_lowest_layer(*stream_).expires_after(std::chrono::seconds(10));
    beast::get_lowest_layer(*stream_).connect(
        asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_), ec);
    if (!ec) {
        // Nagle's algorithm off, as kube-apiserver (Go) has it: the server sends no ACK of
        // its own for the handshake's last message, and a request held back for that ACK would
        // wait for Linux's delayed ACK, 40 ms.
        beast::get_lowest_layer(*stream_).socket().set_option(asio::ip::tcp::no_delay(true), ec);
    }
    if (!ec) {
        SSL_set_tlsext_host_name(stream_->native_handle(), "localhost");
        if (offered_session_) {
            SSL_set_session(stream_->native_handle(), offered_session_.get());
        }
        stream_->set_verify_callback(asio::ssl::host_name_verification("localhost"));
        stream_->handshake(asio::ssl::stream_base::client, ec);
    }
    if (ec) {
        error_ = ec.message();
        return false;
    }
    return true;
}

ClientResponse HttpsClient::request(const std::string& method, const std::string& target,
                                    const std::string& body, const std::string& content_type) {
    http::request<http::string_body> request{http::string_to_verb(method), target, 11};
    request.set(http::field::host, "localhost");
    if (!content_type.empty()) {
        request.set(http::field::content_type, content_type);
    }
    request.body() = body;
    request.prepare_payload();
    request.keep_alive(true);
    beast::error_code ec;
    http::write(*stream_, request, ec);
    if (ec) {
        error_ = ec.message();
        return {};
    }
    return read_response();
}

ClientResponse HttpsClient::read_response() {
    ClientResponse out;
    beast::error_code ec;
    http::response<http::string_body> response;
    http::read(*stream_, buffer_, response, ec);
    if (ec) {
        error_ = ec.message();
        return out;
    }
    out.status = static_cast<int>(response.result_int());
    out.body = response.body();
    out.content_type = std::string(response[http::field::content_type]);
    out.allow = std::string(response[http::field::allow]);
    out.keep_alive = response.keep_alive();
    return out;
}

void HttpsClient::write_raw(const std::string& bytes) {
    asio::write(*stream_, asio::buffer(bytes));
}

void HttpsClient::close_write() {
    beast::error_code ignored;
    beast::get_lowest_layer(*stream_).socket().shutdown(asio::ip::tcp::socket::shutdown_send,
                                                        ignored);
}

bool HttpsClient::server_closes_within(std::chrono::milliseconds timeout) {
    beast::get_lowest_layer(*stream_).expires_after(timeout);
    char byte;
    beast::error_code ec;
    stream_->read_some(asio::buffer(&byte, 1), ec);
    return ec && ec != beast::error::timeout;
}

std::string HttpsClient::peer_common_name() {
    X509* certificate = SSL_get1_peer_certificate(stream_->native_handle());
    if (certificate == nullptr) {
        return {};
    }
    char name[256] = {};
    X509_NAME_get_text_by_NID(X509_get_subject_name(certificate), NID_commonName, name,
                              sizeof name);
    X509_free(certificate);
    return name;
}

int HttpsClient::peer_chain_length() {
    const STACK_OF(X509)* chain = SSL_get_peer_cert_chain(stream_->native_handle());
    return chain == nullptr ? 0 : sk_X509_num(chain);
}

std::string HttpsClient::negotiated_alpn() {
    const unsigned char* protocol = nullptr;
    unsigned length = 0;
    SSL_get0_alpn_selected(stream_->native_handle(), &protocol, &length);
    return std::string(reinterpret_cast<const char*>(protocol), length);
}

std::string HttpsClient::negotiated_cipher() {
    return SSL_get_cipher_name(stream_->native_handle());
}

TlsSession HttpsClient::session() {
    return TlsSession(SSL_get1_session(stream_->native_handle()), SSL_SESSION_free);
}

bool HttpsClient::resumed() {
    return SSL_session_reused(stream_->native_handle()) == 1;
}

int post_once(unsigned short port, const ClientOptions& options, const std::string& target,
              const std::string& body) {
    HttpsClient client(port, options);
    if (!client.connect()) {
        return -1;
    }
    const auto response = client.request("POST", target, body);
    return response.status == 0 ? -1 : response.status;
}

std::pair<int, std::string> plain_get(unsigned short port, const std::string& target) {
    asio::io_context io;
    beast::tcp_stream stream(io);
    stream.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    http::request<http::empty_body> request{http::verb::get, target, 11};
    request.set(http::field::host, "localhost");
    http::write(stream, request);
    beast::flat_buffer buffer;
    http::response<http::string_body> response;
    http::read(stream, buffer, response);
    return {static_cast<int>(response.result_int()), response.body()};
}

}  // namespace mdadmit::test
