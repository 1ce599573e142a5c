#pragma once

// Reading one HTTP/1.1 request off a connection, with the server's header limit, whatever
// pieces the bytes arrive in. Separate from the session so that the read loop can be driven
// by a stream of scripted pieces (test/fuzz/request_read_fuzz.cpp).

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <concepts>
#include <cstddef>
#include <memory_resource>
#include <tuple>

namespace mdadmit::server {

// The most a request's start line and header fields may take together.
inline constexpr std::size_t header_limit = 16 * 1024;
// The first read of a request; the buffer grows when a request needs more.
inline constexpr std::size_t read_chunk = 4 * 1024;

// A request's target and header fields take their memory from a resource the session gives
// (its coroutine frame first): with Beast's default allocator every field is an allocation.
using HeaderAllocator = std::pmr::polymorphic_allocator<char>;
using RequestParser =
    boost::beast::http::request_parser<boost::beast::http::string_body, HeaderAllocator>;

// How reading a request ended.
enum class ReadEnd {
    complete,
    over_limit,        // the body is longer than the limit: answered 413, then closed
    header_too_large,  // answered 431
    malformed,         // answered 400
    gone,              // the client left or fell silent: closed without an answer
};

struct ReadOutcome {
    ReadEnd end = ReadEnd::complete;
    boost::beast::error_code ec;
};

// A stream that can hand over bytes it already holds without waiting (TLS, whose records
// OpenSSL has decrypted) saves the round through the executor an asynchronous read costs.
template <typename Stream>
concept ReadsWithoutWaiting = requires(Stream& stream, boost::asio::mutable_buffer buffer,
                                       boost::beast::error_code& ec) {
    { stream.has_buffered() } -> std::convertible_to<bool>;
    { stream.read_now(buffer, ec) } -> std::convertible_to<std::size_t>;
};

// Reads one request, parsing what `buffer` holds before reading more, so that a request that
// arrived whole costs no further wait or completion handler. `on_header` runs once the header
// is parsed (it sets the time the body has to arrive). The parser's header limit must be
// `header_limit` or more: this loop applies the limit to the header as a whole.
template <typename Stream, typename OnHeader>
boost::asio::awaitable<ReadOutcome> read_request(Stream& stream, boost::beast::flat_buffer& buffer,
                                                 RequestParser& parser, OnHeader on_header) {
    namespace http = boost::beast::http;
    bool header_done = false;
    std::size_t header_taken = 0;  // bytes of the header the parser has taken so far
    for (;;) {
        if (buffer.size() != 0) {
            boost::beast::error_code ec;
            const std::size_t used = parser.put(buffer.data(), ec);
            buffer.consume(used);
            // Beast takes whole fields as they arrive and applies its limit only to what one
            // put() has not taken yet, so a header split across reads could grow past it: the
            // limit is on the header's bytes so far, taken or still buffered.
            if (!header_done) {
                header_taken += used;
                const std::size_t unparsed = ec == http::error::need_more ? buffer.size() : 0;
                if (header_taken + unparsed > header_limit) {
                    ec = http::error::header_limit;
                }
            }
            // A Content-Length over the limit stops the parser with every header read, before
            // it counts the header as done.
            if (!header_done && (parser.is_header_done() || ec == http::error::body_limit)) {
                header_done = true;
                on_header();
            }
            if (ec == http::error::body_limit) {
                co_return ReadOutcome{ReadEnd::over_limit, ec};
            }
            if (ec == http::error::header_limit) {
                co_return ReadOutcome{ReadEnd::header_too_large, ec};
            }
            if (ec && ec != http::error::need_more) {
                co_return ReadOutcome{header_done ? ReadEnd::gone : ReadEnd::malformed, ec};
            }
            if (parser.is_done()) {
                co_return ReadOutcome{};
            }
            if (!ec && used != 0 && buffer.size() != 0) {
                continue;  // the parser took a part; the rest follows in the same buffer
            }
        }
        boost::beast::error_code ec;
        std::size_t bytes = 0;
        const auto space = buffer.prepare(read_chunk);
        if constexpr (ReadsWithoutWaiting<Stream>) {
            if (stream.has_buffered()) {
                bytes = stream.read_now(space, ec);
            }
        }
        if (bytes == 0 && !ec) {
            std::tie(ec, bytes) = co_await stream.async_read_some(
                space, boost::asio::as_tuple(boost::asio::use_awaitable));
        }
        if (ec == boost::asio::error::eof && parser.got_some() && !header_done) {
            boost::beast::error_code partial;
            parser.put_eof(partial);  // a request cut short is malformed, and answered so
            co_return ReadOutcome{ReadEnd::malformed, partial};
        }
        if (ec) {
            co_return ReadOutcome{ReadEnd::gone, ec};
        }
        buffer.commit(bytes);
    }
}

}  // namespace mdadmit::server
