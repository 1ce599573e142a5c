#pragma once

#include <boost/json/value.hpp>
#include <string>
#include <string_view>

#include "mdadmit/rules/result.hpp"

namespace mdadmit::rules {

// Parses JSON text with the core's limits (nesting depth); an Error names the byte offset.
// A number beyond a double (1e400) is refused too.
Result<boost::json::value> parse_json(std::string_view text);

// Whether every number in `value` is finite. Boost.JSON 1.81 reads 1e400 as infinity and 0e400
// as NaN, which no JSON text can spell again and which compare unequal to themselves.
bool numbers_are_finite(const boost::json::value& value);

// The refusal of a text that holds such a number.
inline constexpr std::string_view non_finite_number = "a number beyond the range of a double";

// The value at a JSON Pointer ("/spec/roles"), or null when there is none.
const boost::json::value* at_pointer(const boost::json::value& value, std::string_view pointer);
// The string at a JSON Pointer, or "" when there is none or it is not a string.
std::string string_at(const boost::json::value& value, std::string_view pointer);

}  // namespace mdadmit::rules
