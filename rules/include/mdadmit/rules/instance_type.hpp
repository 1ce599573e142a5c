#pragma once

#include <boost/json/fwd.hpp>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "mdadmit/rules/platform.hpp"
#include "mdadmit/rules/quantity.hpp"

namespace mdadmit::rules {

// What admission reads of a cluster-scoped InstanceType (`worker.gpustack.ai/v1alpha1`): the
// pool a role's Pods are scheduled from.
struct InstanceType {
    // status.detail.manufacturer: "" until the operator has computed the pool's detail.
    std::string manufacturer;
    bool acceleratable = false;     // spec.acceleratable
    std::string accelerator_group;  // spec.acceleratorGroup
    // status.detail.slicedDetail: the pool offers logical slices (logical.count > 0) and
    // hardware partitions (physical.count > 0) of these profiles.
    bool logical_slicing = false;
    bool partitioning = false;
    std::vector<std::string> partition_profiles;
    // status.accelerator.capacity: whole accelerators in the pool; absent until computed.
    std::optional<Quantity> capacity;

    Platform platform() const { return platform_from_manufacturer(manufacturer); }
    bool detail_ready() const { return !manufacturer.empty(); }
    bool offers_profile(std::string_view profile) const;
};

// Looks a name up without making a string of it.
struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view name) const {
        return std::hash<std::string_view>{}(name);
    }
};

// The cluster's InstanceTypes by name. An empty map means nothing is known: every platform
// resolves to unknown and the rules that read InstanceTypes stay silent.
using InstanceTypes = std::unordered_map<std::string, InstanceType, NameHash, std::equal_to<>>;

struct NamedInstanceType {
    std::string name;
    InstanceType type;
};

// Reads an InstanceType object (from a manifest or the API); nullopt when it has no name.
// Fields of the wrong type read as absent: an InstanceType is the cluster's, not the user's.
std::optional<NamedInstanceType> decode_instance_type(const boost::json::value& object);

}  // namespace mdadmit::rules
