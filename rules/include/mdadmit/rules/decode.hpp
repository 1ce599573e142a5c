#pragma once

#include <boost/json/fwd.hpp>
#include <string>
#include <vector>

#include "mdadmit/rules/model.hpp"

namespace mdadmit::rules {

// A value the decoder could not use: a wrong type or an unknown enum value.
struct DecodeProblem {
    std::string path;
    std::string message;
};

struct Decoded {
    ModelDeployment model;
    std::vector<DecodeProblem> problems;  // allocated only for a malformed object
};

// Decodes any JSON value into the typed model. Never throws on bad input: values of the
// wrong type are left absent and reported in `problems`. Lists are read up to the limits
// in limits.hpp, so a huge array costs bounded work. The model's texts are views of
// `object`'s strings and its lists are allocated from `memory`: both must outlive it.
Decoded decode_model_deployment(const boost::json::value& object,
                                Memory memory = std::pmr::get_default_resource());

}  // namespace mdadmit::rules
