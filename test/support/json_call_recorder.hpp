#pragma once

#include <boost/json/array.hpp>
#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/object.hpp>
#include <boost/json/string.hpp>
#include <boost/system/error_code.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mdadmit::test {

// Writes down each call of a basic_parser handler, a key or string given in parts as one.
struct JsonCallRecorder {
    static constexpr std::size_t max_object_size = boost::json::object::max_size();
    static constexpr std::size_t max_array_size = boost::json::array::max_size();
    static constexpr std::size_t max_key_size = boost::json::string::max_size();
    static constexpr std::size_t max_string_size = boost::json::string::max_size();

    std::vector<std::string> calls;
    std::string parts;

    bool record(std::string call) {
        calls.push_back(std::move(call));
        return true;
    }
    bool on_document_begin(boost::system::error_code&) { return record("begin"); }
    bool on_document_end(boost::system::error_code&) { return record("end"); }
    bool on_object_begin(boost::system::error_code&) { return record("{"); }
    bool on_object_end(std::size_t n, boost::system::error_code&) {
        return record("} " + std::to_string(n));
    }
    bool on_array_begin(boost::system::error_code&) { return record("["); }
    bool on_array_end(std::size_t n, boost::system::error_code&) {
        return record("] " + std::to_string(n));
    }
    bool on_key_part(boost::json::string_view s, std::size_t, boost::system::error_code&) {
        parts.append(s);
        return true;
    }
    bool on_key(boost::json::string_view s, std::size_t n, boost::system::error_code&) {
        parts.append(s);
        return record("key " + std::exchange(parts, {}) + " " + std::to_string(n));
    }
    bool on_string_part(boost::json::string_view s, std::size_t, boost::system::error_code&) {
        parts.append(s);
        return true;
    }
    bool on_string(boost::json::string_view s, std::size_t n, boost::system::error_code&) {
        parts.append(s);
        return record("string " + std::exchange(parts, {}) + " " + std::to_string(n));
    }
    bool on_number_part(boost::json::string_view, boost::system::error_code&) { return true; }
    bool on_int64(std::int64_t i, boost::json::string_view, boost::system::error_code&) {
        return record("int64 " + std::to_string(i));
    }
    bool on_uint64(std::uint64_t u, boost::json::string_view, boost::system::error_code&) {
        return record("uint64 " + std::to_string(u));
    }
    bool on_double(double d, boost::json::string_view, boost::system::error_code&) {
        return record("double " + std::to_string(d));
    }
    bool on_bool(bool b, boost::system::error_code&) { return record(b ? "true" : "false"); }
    bool on_null(boost::system::error_code&) { return record("null"); }
    bool on_comment_part(boost::json::string_view, boost::system::error_code&) { return true; }
    bool on_comment(boost::json::string_view, boost::system::error_code&) { return true; }
};

// Boost.JSON's calls for `text` given in one piece, nesting at most `max_depth`, or nullopt where
// it refuses the text.
inline std::optional<std::vector<std::string>> boost_parser_calls(std::string_view text,
                                                                  std::size_t max_depth) {
    boost::json::parse_options options;
    options.max_depth = max_depth;
    boost::json::basic_parser<JsonCallRecorder> parser(options);
    boost::system::error_code ec;
    const std::size_t taken = parser.write_some(false, text.data(), text.size(), ec);
    if (ec || taken != text.size()) {
        return std::nullopt;
    }
    return parser.handler().calls;
}

}  // namespace mdadmit::test
