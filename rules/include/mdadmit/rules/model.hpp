#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mdadmit/rules/quantity.hpp"

namespace mdadmit::rules {

// The typed ModelDeployment the rules read. It is decoded once from JSON; a value of the
// wrong type is left absent here (and reported by the structural check), so no rule ever
// sees a malformed value. Lists keep their JSON indices so every value has its field path.

enum class EngineKind { unknown, vllm, sglang };
enum class RoleKind { unknown, server, prefill, decode, encode };

struct PortSpec {
    std::optional<std::int64_t> port;  // absent when not an integer
    std::string protocol = "TCP";
    bool operator==(const PortSpec&) const = default;
};

struct EnvVar {
    std::string name;
    std::string value;
};

struct Resources {
    bool present = false;  // spec.roles[i].resources is set
    std::optional<Quantity> accelerator;
    // 0 (or absent) means no slicing.
    std::optional<std::int64_t> sliced_memory_percentage;
    std::optional<std::int64_t> sliced_cores_percentage;
    std::optional<std::string> partitioned_profile;
    std::optional<Quantity> interface_count;

    bool sliced() const {
        return sliced_memory_percentage.value_or(0) != 0 ||
               sliced_cores_percentage.value_or(0) != 0;
    }
    bool partitioned() const { return partitioned_profile && !partitioned_profile->empty(); }
};

// An entry of additionalVolumes: a Kubernetes volume source beside its mount.
struct Volume {
    bool is_object = false;  // an entry of another type is the structural check's to report
    std::string name;
    std::optional<std::string> mount_path;
    std::optional<std::string> sub_path;
    std::optional<std::string> sub_path_expr;
    bool read_only = false;
    std::optional<std::string> host_path;  // hostPath.path, for a hostPath volume
    // The members other than the mount fields that hold an object: hostPath,
    // persistentVolumeClaim, configMap, or any source a newer Kubernetes adds.
    std::vector<std::string> sources;
};

struct Role {
    std::size_t index = 0;  // position in spec.roles
    std::string name;
    RoleKind kind = RoleKind::server;
    std::int64_t replicas = 1;
    std::int64_t size = 1;
    std::optional<std::string> instance_type;
    Resources resources;
    std::optional<std::string> image;
    std::vector<PortSpec> ports;  // index k is spec.roles[i].ports[k]
    // Lists of strings keep one entry per JSON element; a non-string element becomes "",
    // which is never a flag, so indices stay aligned with the field paths.
    std::optional<std::vector<std::string>> command;
    std::vector<std::string> extra_args;
    std::vector<EnvVar> env;
    std::vector<Volume> additional_volumes;  // index k is additionalVolumes[k]
    std::optional<std::int64_t> elastic_ep_width;
    bool has_elastic_ep = false;
    bool privileged = false;
    std::optional<std::string> topology_required_level;

    bool takes_over() const { return command.has_value(); }
};

struct Router {
    std::string name;
    std::optional<std::string> image;
    std::optional<std::int64_t> replicas;
    std::vector<std::string> extra_args;
    std::optional<std::int64_t> request_timeout_seconds;
    std::optional<std::int64_t> disaggregation_threshold_tokens;
};

struct KvCache {
    std::optional<std::string> pool_name;
};

struct ModelDeployment {
    std::string name;
    std::string namespace_name;
    bool being_deleted = false;  // metadata.deletionTimestamp is set
    std::string model_name;
    std::optional<std::string> artifact_name;  // set ("" without a name) with artifactRef
    EngineKind engine = EngineKind::unknown;
    std::string engine_name;  // as written, for messages
    std::optional<std::string> engine_version;
    std::optional<KvCache> kv_cache;
    std::optional<std::string> kv_transfer_protocol;  // spec.kvTransfer.protocol
    std::optional<Router> router;
    std::vector<Role> roles;
};

std::string_view to_string(EngineKind engine);
std::string_view to_string(RoleKind kind);

}  // namespace mdadmit::rules
