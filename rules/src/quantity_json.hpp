#pragma once

#include <boost/json/value.hpp>
#include <string>

#include "json_kind.hpp"
#include "mdadmit/rules/quantity.hpp"

namespace mdadmit::rules {

// A quantity as JSON holds one: an integer, or a string in Kubernetes' grammar; nullopt for
// anything else.
inline std::optional<Quantity> quantity_of(const boost::json::value& value) {
    if (value.is_int64()) {
        return Quantity::of(value.get_int64());
    }
    if (value.is_uint64()) {
        return Quantity::parse(std::to_string(value.get_uint64()));
    }
    return value.is_string() ? Quantity::parse(value.get_string()) : std::nullopt;
}

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
