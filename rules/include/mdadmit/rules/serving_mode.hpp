#pragma once

#include <string_view>

namespace mdadmit::rules {

// The seed's table "Which Pods receive traffic".
enum class ServingMode {
    internal_server,
    external_dp,
    elastic_ep,
    prefill,
    decode,
    encode,
    unknown
};

std::string_view to_string(ServingMode mode);

}  // namespace mdadmit::rules
