#pragma once

#include <boost/asio/ssl/context.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "mdadmit/rules/result.hpp"

namespace mdadmit::server {

struct TlsSettings {
    std::string cert_file;
    std::string key_file;
    std::string client_ca_file;  // empty: no client certificates asked for
    bool tls13_only = false;
};

// A server TLS context: TLS 1.2 minimum (or 1.3), AEAD cipher suites only, ALPN http/1.1,
// the certificate chain and a key that matches it. An Error names the file and the reason.
rules::Result<std::shared_ptr<boost::asio::ssl::context>> make_tls_context(
    const TlsSettings& settings);

// The notAfter of the first certificate in a PEM file, as Unix seconds.
rules::Result<std::int64_t> certificate_expiry(const std::string& cert_file);

}  // namespace mdadmit::server
