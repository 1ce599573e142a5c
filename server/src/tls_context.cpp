#include "tls_context.hpp"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <boost/system/system_error.hpp>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <optional>

namespace mdadmit::server {

namespace ssl = boost::asio::ssl;

namespace {

// TLS 1.2 suites with forward secrecy and authenticated encryption; TLS 1.3's are all AEAD.
constexpr const char* tls12_ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

// TLS 1.3's suites, AES-128-GCM first: OpenSSL's default order puts AES-256-GCM with SHA-384
// first, which under the server's preference every client got, kube-apiserver too (Go asks for
// AES-128 first where the CPU has AES instructions). SHA-384 has no CPU instructions where
// SHA-256 has them, and the key schedule hashes all through a handshake. A client that asks
// for ChaCha20 first (no AES instructions) gets it (SSL_OP_PRIORITIZE_CHACHA).
constexpr const char* tls13_ciphersuites =
    "TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_256_GCM_SHA384";

// Chooses http/1.1 when the client offers it; the server speaks no HTTP/2.
int select_alpn(SSL*, const unsigned char** out, unsigned char* out_length, const unsigned char* in,
                unsigned int in_length, void*) {
    static constexpr unsigned char http11[] = "http/1.1";
    for (unsigned int i = 0; i < in_length;) {
        const unsigned int length = in[i];
        if (length == sizeof(http11) - 1 && i + 1 + length <= in_length &&
            std::memcmp(in + i + 1, http11, length) == 0) {
            *out = in + i + 1;
            *out_length = static_cast<unsigned char>(length);
            return SSL_TLSEXT_ERR_OK;
        }
        i += 1 + length;
    }
    return SSL_TLSEXT_ERR_NOACK;
}

std::string openssl_reason(const boost::system::system_error& e) {
    std::string reason = e.code().message();
    if (const unsigned long code = ERR_get_error(); code != 0) {
        char text[256];
        ERR_error_string_n(code, text, sizeof text);
        reason = text;
    }
    ERR_clear_error();
    return reason;
}

}  // namespace

rules::Result<std::shared_ptr<ssl::context>> make_tls_context(const TlsSettings& settings) {
    auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
    SSL_CTX* native = context->native_handle();
    SSL_CTX_set_min_proto_version(native, settings.tls13_only ? TLS1_3_VERSION : TLS1_2_VERSION);
    // No session is resumed: the only client, kube-apiserver, never resumes one (client-go's
    // TLS configuration has no session cache), so every connection it opens is a full
    // handshake. Session tickets would add two tickets to each of those handshakes that the
    // client throws away: 11 to 20 % of the server's CPU per new connection
    // (bench/RESULTS.md). No ticket key then lives in the process, no client can grow a
    // session cache, and with no session to resume OpenSSL needs no session id context, even
    // under client certificates.
    SSL_CTX_set_options(native, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION |
                                    SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_PRIORITIZE_CHACHA |
                                    SSL_OP_NO_TICKET);
    SSL_CTX_set_num_tickets(native, 0);
    SSL_CTX_set_session_cache_mode(native, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_cipher_list(native, tls12_ciphers);
    SSL_CTX_set_ciphersuites(native, tls13_ciphersuites);
    // The chain sent is the one the certificate file holds. Without this, OpenSSL builds a
    // chain on every handshake from the trust store, which holds the client CAs under mTLS:
    // a verification per handshake, and the client CA sent along when it issued ours.
    SSL_CTX_set_mode(native, SSL_MODE_NO_AUTO_CHAIN);
    SSL_CTX_set_alpn_select_cb(native, select_alpn, nullptr);
    const auto load = [&](const std::string& what, const std::string& file,
                          auto&& step) -> std::optional<std::string> {
        try {
            step();
        } catch (const boost::system::system_error& e) {
            return what + " " + file + ": " + openssl_reason(e);
        }
        return std::nullopt;
    };
    if (auto problem = load("certificate", settings.cert_file,
                            [&] { context->use_certificate_chain_file(settings.cert_file); })) {
        return rules::Error{*problem};
    }
    if (auto problem = load("private key", settings.key_file, [&] {
            context->use_private_key_file(settings.key_file, ssl::context::pem);
        })) {
        return rules::Error{*problem};
    }
    if (SSL_CTX_check_private_key(native) != 1) {
        ERR_clear_error();
        return rules::Error{"private key " + settings.key_file + " does not match certificate " +
                            settings.cert_file};
    }
    if (!settings.client_ca_file.empty()) {
        if (auto problem = load("client CA", settings.client_ca_file,
                                [&] { context->load_verify_file(settings.client_ca_file); })) {
            return rules::Error{*problem};
        }
        context->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
    }
    return context;
}

rules::Result<std::int64_t> certificate_expiry(const std::string& cert_file) {
    FILE* file = std::fopen(cert_file.c_str(), "r");
    if (file == nullptr) {
        return rules::Error{"certificate " + cert_file + ": " + std::strerror(errno)};
    }
    X509* certificate = PEM_read_X509(file, nullptr, nullptr, nullptr);
    std::fclose(file);
    if (certificate == nullptr) {
        ERR_clear_error();
        return rules::Error{"certificate " + cert_file + ": no PEM certificate"};
    }
    std::tm expiry{};
    const int ok = ASN1_TIME_to_tm(X509_get0_notAfter(certificate), &expiry);
    X509_free(certificate);
    if (ok != 1) {
        return rules::Error{"certificate " + cert_file + ": unreadable notAfter"};
    }
    return static_cast<std::int64_t>(timegm(&expiry));
}

}  // namespace mdadmit::server
