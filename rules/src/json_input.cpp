#include "mdadmit/rules/json_input.hpp"

#include <boost/json/parser.hpp>
#include <cmath>

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
    boost::json::value value = parser.release();
    if (!numbers_are_finite(value)) {
        return Error{"invalid JSON: " + std::string(non_finite_number)};
    }
    return value;
}

bool numbers_are_finite(const boost::json::value& value) {
    switch (value.kind()) {
        case boost::json::kind::double_:
            return std::isfinite(value.get_double());
        case boost::json::kind::array:
            for (const auto& item : value.get_array()) {
                if (!numbers_are_finite(item)) {
                    return false;
                }
            }
            return true;
        case boost::json::kind::object:
            for (const auto& [key, item] : value.get_object()) {
                if (!numbers_are_finite(item)) {
                    return false;
                }
            }
            return true;
        default:
            return true;
    }
}

const boost::json::value* at_pointer(const boost::json::value& value, std::string_view pointer) {
    boost::system::error_code ec;
    return value.find_pointer(pointer, ec);
}

std::string string_at(const boost::json::value& value, std::string_view pointer) {
    const boost::json::value* found = at_pointer(value, pointer);
    return found != nullptr && found->is_string() ? std::string(found->get_string())
                                                  : std::string();
}

}  // namespace mdadmit::rules
