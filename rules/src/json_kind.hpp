#pragma once

#include <boost/json/value.hpp>
#include <string_view>

namespace mdadmit::rules {

// "an integer", "a string", ...: how messages name the type of a JSON value.
inline std::string_view json_kind_name(const boost::json::value& value) {
    switch (value.kind()) {
        case boost::json::kind::null:
            return "null";
        case boost::json::kind::bool_:
            return "a boolean";
        case boost::json::kind::int64:
        case boost::json::kind::uint64:
            return "an integer";
        case boost::json::kind::double_:
            return "a number";
        case boost::json::kind::string:
            return "a string";
        case boost::json::kind::array:
            return "an array";
        case boost::json::kind::object:
            return "an object";
    }
    return "a value";
}

}  // namespace mdadmit::rules
