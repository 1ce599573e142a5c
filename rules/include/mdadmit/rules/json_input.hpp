#pragma once

#include <boost/json/value.hpp>
#include <string>
#include <string_view>

#include "mdadmit/rules/result.hpp"

namespace mdadmit::rules {

// Parses JSON text with the core's limits (nesting depth); an Error names the byte offset.
Result<boost::json::value> parse_json(std::string_view text);

// The value at a JSON Pointer ("/spec/roles"), or null when there is none.
const boost::json::value* at_pointer(const boost::json::value& value, std::string_view pointer);
// The string at a JSON Pointer, or "" when there is none or it is not a string.
std::string string_at(const boost::json::value& value, std::string_view pointer);

}  // namespace mdadmit::rules
