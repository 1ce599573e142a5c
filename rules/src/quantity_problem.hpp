#pragma once

#include <boost/json/value.hpp>
#include <string>

#include "json_kind.hpp"

namespace mdadmit::rules {

// What is wrong with a value that should be a Kubernetes quantity; the decoder and the
// schema check word it alike, so both structural checks say the same thing.
inline std::string quantity_problem(const boost::json::value& value) {
    if (value.is_string()) {
        return "\"" + std::string(value.get_string()) +
               "\" is not a Kubernetes quantity (e.g. 1, \"2\", \"1500m\", \"1.5\")";
    }
    return "expected an integer or a quantity string, got " + std::string(json_kind_name(value));
}

}  // namespace mdadmit::rules
