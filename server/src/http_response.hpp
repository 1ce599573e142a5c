#pragma once

#include <string>
#include <string_view>

namespace mdadmit::server {

// What an HTTP/1.x answer says, before it is put on the wire.
struct ResponseHead {
    int status = 200;
    std::string_view content_type;
    std::string_view allow;  // the Allow header of a 405, or empty
    unsigned version = 11;   // of the request: 10 or 11
    bool keep_alive = true;
    bool head_only = false;  // the answer to a HEAD request: the length, without the body
};

// Writes the status line, headers and body into `wire` (replacing what it held, keeping its
// capacity), so that an answer leaves in one write and, over TLS, in one record.
void write_response(const ResponseHead& head, std::string_view body, std::string& wire);

}  // namespace mdadmit::server
