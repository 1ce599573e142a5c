#pragma once

#include <algorithm>
#include <array>
#include <boost/system/error_code.hpp>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "json_scan.hpp"

namespace mdadmit::admission {

// The containers the tokenizer keeps open at most; a deeper document is left to Boost.JSON.
inline constexpr std::size_t tokenizer_most_nesting = json_scan::OpenContainers::most;

// A handler that reads some of the values it leaves out itself: where `leaves_out()` has said
// that the value at `i` is left out, its `whole_value_end(text, i, max_nesting, unescaped)`
// returns `i` for a value the tokenizer is to check and give as `null`, or reads the value
// itself with at most `max_nesting` containers open and returns one past it, white space after
// it included (npos where it does not take it); the tokenizer then goes on as after any value,
// with no call for it.
template <typename Handler>
concept ReadsWholeValues = requires(Handler& handler, std::string_view text, std::string& out) {
    {
        handler.whole_value_end(text, std::size_t{}, std::size_t{}, out)
        } -> std::same_as<std::size_t>;
};

// Reads the one JSON value that begins at `i` of `text` and makes Boost.JSON's basic_parser
// calls for it to `handler`, as tokenize_document does for a document (see there); returns one
// past the value and the white space after it, or npos where tokenize_document would return
// false. At most `max_nesting` containers, and no more than tokenizer_most_nesting, are open at
// once.
template <typename Handler, typename LeavesOut>
std::size_t tokenized_value_end(std::string_view text, std::size_t i, std::size_t max_nesting,
                                LeavesOut leaves_out, Handler& handler, std::string& unescaped) {
    using namespace json_scan;
    boost::system::error_code ec;
    const std::size_t nesting_limit = std::min(max_nesting, tokenizer_most_nesting);
    std::array<std::size_t, tokenizer_most_nesting> counts;  // members or elements of each
    OpenContainers open;

    bool expect_key = false;
    for (;;) {
        if (expect_key) {
            std::string_view key;
            if (at(text, i) != '"' || (i = string_end(text, i, key, unescaped)) == npos) {
                return npos;
            }
            i = skip_space(text, i);
            if (at(text, i) != ':' || !handler.on_key(key, key.size(), ec)) {
                return npos;
            }
            i = skip_space(text, i + 1);
        }
        // A value begins at i.
        const char first = at(text, i);
        if (leaves_out()) {
            std::size_t end = i;
            if constexpr (ReadsWholeValues<Handler>) {
                // Within the tokenizer's own limit, counted from the document's root: a deeper
                // value is left to Boost.JSON however it is read.
                end = handler.whole_value_end(text, i, nesting_limit - open.size(), unescaped);
            }
            if (end == i) {
                end = checked_value_end(text, i, max_nesting - open.size());
                if (end == npos || !handler.on_null(ec)) {
                    return npos;
                }
            }
            if ((i = end) == npos) {
                return npos;
            }
        } else if (first == '{' || first == '[') {
            const bool object = first == '{';
            if (open.size() == nesting_limit ||
                !(object ? handler.on_object_begin(ec) : handler.on_array_begin(ec))) {
                return npos;
            }
            counts[open.size()] = 0;
            open.open(object);
            i = skip_space(text, i + 1);
            if (at(text, i) != (object ? '}' : ']')) {
                expect_key = object;
                continue;
            }
            open.close();
            ++i;
            if (!(object ? handler.on_object_end(0, ec) : handler.on_array_end(0, ec))) {
                return npos;
            }
        } else if (first == '"') {
            std::string_view value;
            if ((i = string_end(text, i, value, unescaped)) == npos ||
                !handler.on_string(value, value.size(), ec)) {
                return npos;
            }
        } else if (first == 't' || first == 'f' || first == 'n') {
            const std::string_view literal = first == 't'   ? "true"
                                             : first == 'f' ? "false"
                                                            : "null";
            if (text.substr(i, literal.size()) != literal ||
                !(first == 'n' ? handler.on_null(ec) : handler.on_bool(first == 't', ec))) {
                return npos;
            }
            i += literal.size();
        } else {
            const std::size_t begin = i;
            std::int64_t value = 0;
            if (!read_integer(text, i, value) ||
                !handler.on_int64(value, text.substr(begin, i - begin), ec)) {
                return npos;
            }
        }
        // A value has ended at i: its container goes on, ends, or there is none.
        for (;;) {
            i = skip_space(text, i);
            if (open.size() == 0) {
                return i;
            }
            const bool object = open.innermost_is_object();
            const std::size_t members = ++counts[open.size() - 1];
            if (at(text, i) == ',') {
                i = skip_space(text, i + 1);
                expect_key = object;
                break;
            }
            if (at(text, i) != (object ? '}' : ']')) {
                return npos;
            }
            open.close();
            ++i;
            if (!(object ? handler.on_object_end(members, ec)
                         : handler.on_array_end(members, ec))) {
                return npos;
            }
        }
    }
}

// Reads `text` as one whole JSON document and makes the calls of Boost.JSON's basic_parser to
// `handler` (on_document_begin ... on_document_end), as basic_parser makes them for a document
// given in one piece, except that a key or string is never given in parts. It takes the common
// case of a review only, in a straight pass without basic_parser's means to stop and resume: it
// returns false, having made the calls for some part of the text, where Boost.JSON refuses the
// document and also where it leaves one to Boost.JSON: a number with a fraction or an exponent or
// of more than 18 digits, a `\u` escape of half a surrogate pair, nesting deeper than
// `max_depth` or tokenizer_most_nesting, or a call that returns false. Whatever it returns true
// for, Boost.JSON reads with the same calls.
//
// Where a value is about to begin and `leaves_out()` says the handler leaves it out, the value is
// checked without a call (json_scan::checked_value_end) and given as `null`: the handler leaves
// such a value out whatever it is, unless it reads the value itself (ReadsWholeValues). A key or
// string with escapes is given decoded in `unescaped`, whose memory is kept from one document to
// the next.
template <typename Handler, typename LeavesOut>
bool tokenize_document(std::string_view text, std::size_t max_depth, LeavesOut leaves_out,
                       Handler& handler, std::string& unescaped) {
    using namespace json_scan;
    boost::system::error_code ec;
    if (!handler.on_document_begin(ec)) {
        return false;
    }
    const std::size_t end =
        tokenized_value_end(text, skip_space(text, 0), max_depth, leaves_out, handler, unescaped);
    return end == text.size() && handler.on_document_end(ec);
}

}  // namespace mdadmit::admission
