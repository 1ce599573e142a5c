#pragma once

#include <boost/json/value.hpp>
#include <string_view>

#include "mdadmit/rules/result.hpp"

namespace mdadmit::rules {

// Parses JSON text with the core's limits (nesting depth); an Error names the byte offset.
Result<boost::json::value> parse_json(std::string_view text);

}  // namespace mdadmit::rules
