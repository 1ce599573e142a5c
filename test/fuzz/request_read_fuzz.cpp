// Raw bytes from a client into the session's read loop (server/src/request_reader.hpp), one
// request after another as on a keep-alive connection, cut into pieces the input chooses;
// some pieces are offered as bytes TLS already holds, the others through an asynchronous read.
//
// Invariants:
// - how the bytes are cut changes nothing: every request ends the same way, with the same
//   method, target, fields and body when it was read, as when the bytes arrive as fast as a
//   read takes them. The one freedom: a header both malformed and too large may be answered
//   400 or 431, by which fault the parser reaches first;
// - a request read whole (or refused for its body) has a header, from its first byte to the
//   blank line, of at most 16 KiB, and one refused as too large has none within 16 KiB (or a
//   folded field longer than Beast unfolds): the limit holds however the header was cut.
//
// The first two bytes choose the cuts: a small and a large piece, alternating; the first
// byte's low bit says whether the small pieces are offered as bytes already held, and its
// second bit whether an offer comes up empty every other time (a TLS record not yet whole),
// so that the reader falls back to waiting. The rest is what the client sends.
#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory_resource>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "check.hpp"
#include "request_reader.hpp"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
using mdadmit::server::ReadEnd;

// How the client's bytes are cut into the pieces the reader gets.
struct Cuts {
    std::size_t small = 0;  // 0: every piece as large as the reader asks for
    std::size_t large = 0;
    bool small_pieces_held = false;      // offered through has_buffered() and read_now()
    bool held_pieces_come_late = false;  // every other read_now() finds nothing yet
};

// A client's bytes, handed to the reader in the pieces `cuts` sets; the end of the bytes is
// the client closing the connection.
class PiecesStream {
  public:
    PiecesStream(asio::io_context& io, std::string_view bytes, Cuts cuts)
        : executor_(io.get_executor()), bytes_(bytes), cuts_(cuts) {}

    asio::any_io_executor get_executor() const { return executor_; }
    std::size_t delivered() const { return position_; }

    bool has_buffered() const { return cuts_.small_pieces_held && next_is_small_ && !ended(); }
    std::size_t read_now(asio::mutable_buffer space, beast::error_code& ec) {
        if (cuts_.held_pieces_come_late) {
            late_ = !late_;
            if (late_) {
                return 0;
            }
        }
        return take(space, ec);
    }

    template <typename Token>
    auto async_read_some(asio::mutable_buffer space, Token&& token) {
        return asio::async_initiate<Token, void(beast::error_code, std::size_t)>(
            [this, space](auto handler) {
                beast::error_code ec;
                const std::size_t bytes = take(space, ec);
                asio::post(executor_, [handler = std::move(handler), ec, bytes]() mutable {
                    std::move(handler)(ec, bytes);
                });
            },
            token);
    }

  private:
    bool ended() const { return position_ == bytes_.size(); }

    std::size_t take(asio::mutable_buffer space, beast::error_code& ec) {
        if (ended()) {
            ec = asio::error::eof;
            return 0;
        }
        std::size_t piece = space.size();
        if (cuts_.small != 0) {
            piece = std::min(piece, next_is_small_ ? cuts_.small : cuts_.large);
            next_is_small_ = !next_is_small_;
        }
        piece = std::min(piece, bytes_.size() - position_);
        std::memcpy(space.data(), bytes_.data() + position_, piece);
        position_ += piece;
        return piece;
    }

    asio::any_io_executor executor_;
    std::string_view bytes_;
    Cuts cuts_;
    std::size_t position_ = 0;
    bool next_is_small_ = true;
    bool late_ = false;
};

static_assert(mdadmit::server::ReadsWithoutWaiting<PiecesStream>,
              "the reader must be offered the held pieces");

// What a reader made of one request.
struct Request {
    ReadEnd end = ReadEnd::gone;
    beast::error_code ec;
    std::size_t starts_at = 0;  // offset of its first byte in the client's bytes
    std::string method;
    std::string target;
    std::vector<std::pair<std::string, std::string>> fields;
    std::string body;

    bool operator==(const Request&) const = default;
};

// A request whose header was read whole, refused for its body or not.
bool was_read(ReadEnd end) {
    return end == ReadEnd::complete || end == ReadEnd::over_limit;
}

// Beast unfolds a folded field (a line starting with a space or a tab continues the one
// before) into 4 KiB of its own, and refuses a longer value as a header too large.
bool has_folded_field(std::string_view header) {
    return header.find("\r\n ") != std::string_view::npos ||
           header.find("\r\n\t") != std::string_view::npos;
}

// A header with more than one fault is refused for the one the parser reaches first.
bool same_end(ReadEnd a, ReadEnd b) {
    const auto refused_for_header = [](ReadEnd end) {
        return end == ReadEnd::malformed || end == ReadEnd::header_too_large;
    };
    return a == b || (refused_for_header(a) && refused_for_header(b));
}

// Reads requests off the client's bytes until one does not end complete (at most a few: a
// connection's later requests go the same way).
std::vector<Request> read_all(std::string_view bytes, Cuts cuts) {
    constexpr int most_requests = 4;
    asio::io_context io;
    PiecesStream stream(io, bytes, cuts);
    std::vector<Request> requests;
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
            beast::flat_buffer buffer;
            for (int k = 0; k < most_requests; ++k) {
                std::pmr::monotonic_buffer_resource header_memory;
                mdadmit::server::RequestParser parser(
                    std::piecewise_construct, std::make_tuple(),
                    std::make_tuple(mdadmit::server::HeaderAllocator(&header_memory)));
                parser.header_limit(mdadmit::server::header_limit);
                parser.body_limit(64 * 1024);
                Request request;
                request.starts_at = stream.delivered() - buffer.size();
                const auto outcome =
                    co_await mdadmit::server::read_request(stream, buffer, parser, [] {});
                request.end = outcome.end;
                request.ec = outcome.ec;
                // What a refused or cut-short request had parsed depends on where the reader
                // stopped; the session answers it without looking.
                if (was_read(outcome.end)) {
                    const auto& message = parser.get();
                    request.method = message.method_string();
                    request.target = message.target();
                    for (const auto& field : message) {
                        request.fields.emplace_back(field.name_string(), field.value());
                    }
                    request.body = message.body();
                }
                requests.push_back(std::move(request));
                if (outcome.end != ReadEnd::complete) {
                    co_return;
                }
            }
        },
        [](std::exception_ptr thrown) {
            if (thrown) {
                std::rethrow_exception(thrown);  // a finding, not a short list of requests
            }
        });
    io.run();
    return requests;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 2) {
        return 0;
    }
    const Cuts cuts{1 + data[0] / 4u, 1 + data[1] * 16u, (data[0] & 1u) != 0, (data[0] & 2u) != 0};
    const std::string_view bytes(reinterpret_cast<const char*>(data) + 2, size - 2);

    const std::vector<Request> whole = read_all(bytes, Cuts{});
    const std::vector<Request> cut = read_all(bytes, cuts);
    for (std::size_t k = 0; k < std::min(whole.size(), cut.size()); ++k) {
        FUZZ_CHECK(same_end(whole[k].end, cut[k].end),
                   "request %zu: ended %d (%s) read whole, %d (%s) cut", k,
                   static_cast<int>(whole[k].end), whole[k].ec.message().c_str(),
                   static_cast<int>(cut[k].end), cut[k].ec.message().c_str());
        const std::size_t blank = bytes.find("\r\n\r\n", whole[k].starts_at);
        const bool header_within_limit =
            blank != std::string_view::npos &&
            blank + 4 - whole[k].starts_at <= mdadmit::server::header_limit;
        const bool fits_the_limit =
            header_within_limit &&
            !has_folded_field(bytes.substr(whole[k].starts_at, blank - whole[k].starts_at));
        for (const Request* request : {&whole[k], &cut[k]}) {
            FUZZ_CHECK(request->end != ReadEnd::header_too_large || !fits_the_limit,
                       "request %zu was refused (%s) with a header of at most %zu bytes, %s", k,
                       request->ec.message().c_str(), mdadmit::server::header_limit,
                       request == &whole[k] ? "read whole" : "cut");
        }
        if (!was_read(whole[k].end)) {
            continue;
        }
        FUZZ_CHECK(whole[k] == cut[k], "request %zu: read differently whole and cut", k);
        FUZZ_CHECK(header_within_limit, "request %zu was read with a header of more than %zu bytes",
                   k, mdadmit::server::header_limit);
    }
    FUZZ_CHECK(whole.size() == cut.size(), "%zu requests read whole, %zu cut", whole.size(),
               cut.size());
    return 0;
}
