#pragma once

#include <string_view>

namespace mdadmit::rules {

// Accelerator vendor of a role, from its InstanceType's status.detail.manufacturer.
enum class Platform { unknown, nvidia, amd, ascend, other };

std::string_view to_string(Platform platform);

// Maps a manufacturer string to a platform: case-insensitive, "NVIDIA Corporation" is nvidia,
// "Huawei" or "Ascend" is ascend, "" is unknown (the operator has not computed it yet).
Platform platform_from_manufacturer(std::string_view manufacturer);

}  // namespace mdadmit::rules
