#include "http_response.hpp"

#include <boost/beast/http/status.hpp>
#include <charconv>

namespace mdadmit::server {

void write_response(const ResponseHead& head, std::string_view body, std::string& wire) {
    const auto number = [&wire](std::size_t value) {
        char digits[24];
        wire.append(digits, std::to_chars(digits, digits + sizeof digits, value).ptr);
    };
    wire.assign(head.version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ");
    number(static_cast<std::size_t>(head.status));
    wire += ' ';
    const auto reason =
        boost::beast::http::obsolete_reason(static_cast<boost::beast::http::status>(head.status));
    wire.append(reason.data(), reason.size());
    wire += "\r\nServer: mdadmit\r\nContent-Type: ";
    wire += head.content_type;
    if (!head.allow.empty()) {
        wire += "\r\nAllow: ";
        wire += head.allow;
    }
    wire += "\r\nContent-Length: ";
    number(body.size());
    // HTTP/1.1 keeps a connection unless told otherwise; HTTP/1.0 closes it unless told.
    if (head.version == 10 && head.keep_alive) {
        wire += "\r\nConnection: keep-alive";
    } else if (head.version != 10 && !head.keep_alive) {
        wire += "\r\nConnection: close";
    }
    wire += "\r\n\r\n";
    if (!head.head_only) {
        wire += body;
    }
}

}  // namespace mdadmit::server
