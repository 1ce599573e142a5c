#pragma once

#include <string>
#include <string_view>
#include <unordered_map>

namespace mdadmit::rules {

// Accelerator vendor of a role, from its InstanceType's status.detail.manufacturer.
enum class Platform { unknown, nvidia, amd, ascend, other };

std::string_view to_string(Platform platform);

// Maps a manufacturer string to a platform: case-insensitive, "NVIDIA Corporation" is nvidia,
// "Huawei" or "Ascend" is ascend, "" is unknown (the operator has not computed it yet).
Platform platform_from_manufacturer(std::string_view manufacturer);

// What the engine knows of the cluster's InstanceTypes: name -> manufacturer.
// An empty map means nothing is known, and every platform resolves to unknown.
using InstanceTypes = std::unordered_map<std::string, std::string>;

}  // namespace mdadmit::rules
