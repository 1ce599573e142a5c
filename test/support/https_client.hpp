#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <memory>
#include <optional>
#include <string>

namespace mdadmit::test {

struct ClientOptions {
    std::string ca_file;
    std::string client_cert_file;  // for mTLS
    std::string client_key_file;
    int max_tls_version = 0;  // e.g. TLS1_2_VERSION; 0: library default
    int min_tls_version = 0;
    std::string cipher_list;   // TLS 1.2 ciphers offered; empty: default
    std::string ciphersuites;  // TLS 1.3 suites offered, in the client's order; empty: default
    std::string alpn;          // wire-format protocol list; empty: none
};

struct ClientResponse {
    int status = 0;
    std::string body;
    std::string content_type;
    std::string allow;
    bool keep_alive = false;
};

// A TLS session a client may offer on a later connection, to resume it.
using TlsSession = std::shared_ptr<SSL_SESSION>;

// A blocking HTTPS/1.1 client for the tests: one connection, reused across requests.
class HttpsClient {
  public:
    HttpsClient(unsigned short port, const ClientOptions& options);
    // Connects and handshakes; false (with the error in last_error()) on failure.
    bool connect();
    ClientResponse request(const std::string& method, const std::string& target,
                           const std::string& body = "",
                           const std::string& content_type = "application/json");
    // Reads one response (after write_raw).
    ClientResponse read_response();
    // Writes raw bytes on the established TLS stream (for trickling a request).
    void write_raw(const std::string& bytes);
    // Ends the client's side of the TCP connection (a FIN, no close_notify); reads still work.
    void close_write();
    // Reads until the server closes or `timeout` passes; true when the server closed.
    bool server_closes_within(std::chrono::milliseconds timeout);
    std::string peer_common_name();
    // How many certificates the server sent (its own and the chain after it).
    int peer_chain_length();
    std::string negotiated_alpn();
    // The suite the server chose, e.g. TLS_AES_128_GCM_SHA256.
    std::string negotiated_cipher();
    // The current connection's session (TLS 1.3 tickets arrive after the handshake: take it
    // after a response).
    TlsSession session();
    // Offers `session` on the next connect(), as a client that resumes sessions does.
    void offer_session(TlsSession session) { offered_session_ = std::move(session); }
    // Whether the current connection resumed the offered session.
    bool resumed();
    const std::string& last_error() const { return error_; }

  private:
    unsigned short port_;
    boost::asio::io_context io_;
    boost::asio::ssl::context context_;
    std::optional<boost::beast::ssl_stream<boost::beast::tcp_stream>> stream_;
    boost::beast::flat_buffer buffer_;
    std::string error_;
    TlsSession offered_session_;
};

// One request on a fresh connection: the status, or -1 when the connection failed.
int post_once(unsigned short port, const ClientOptions& options, const std::string& target,
              const std::string& body);

// A plain-HTTP GET (the health port); the status and body.
std::pair<int, std::string> plain_get(unsigned short port, const std::string& target);

}  // namespace mdadmit::test
