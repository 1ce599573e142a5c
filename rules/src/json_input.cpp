#include "mdadmit/rules/json_input.hpp"

#include <boost/json/parser.hpp>

#include "mdadmit/rules/limits.hpp"

namespace mdadmit::rules {

Result<boost::json::value> parse_json(std::string_view text) {
    boost::json::parse_options options;
    options.max_depth = limits::max_json_depth;
    // write() needs the whole document: an incomplete text is an error, not a partial value.
    boost::json::parser parser({}, options);
    boost::system::error_code ec;
    const std::size_t consumed = parser.write(text.data(), text.size(), ec);
    if (ec) {
        return Error{"invalid JSON at byte " + std::to_string(consumed) + ": " + ec.message()};
    }
    return parser.release();
}

}  // namespace mdadmit::rules
