#pragma once

#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <optional>
#include <string_view>
#include <vector>

#include "mdadmit/rules/quantity.hpp"

namespace mdadmit::rules {

// The typed ModelDeployment the rules read. It is decoded once from JSON; a value of the
// wrong type is left absent here (and reported by the structural check), so no rule ever
// sees a malformed value. Lists keep their JSON indices so every value has its field path.
//
// A decoded model refers into what it was decoded from, so that a review copies nothing:
// its texts are views of the JSON document's strings, and its lists live in the memory
// resource the decoder was given. Both must outlive the model.

template <typename T>
using List = std::pmr::vector<T>;
using Memory = std::pmr::memory_resource*;

enum class EngineKind { unknown, vllm, sglang };
enum class RoleKind { unknown, server, prefill, decode, encode };

struct PortSpec {
    std::optional<std::int64_t> port;  // absent when not an integer
    std::string_view protocol = "TCP";
    bool operator==(const PortSpec&) const = default;
};

struct EnvVar {
    std::string_view name;
    std::string_view value;
    bool operator==(const EnvVar&) const = default;
};

struct Resources {
    bool present = false;  // spec.roles[i].resources is set
    std::optional<Quantity> accelerator;
    // 0 (or absent) means no slicing.
    std::optional<std::int64_t> sliced_memory_percentage;
    std::optional<std::int64_t> sliced_cores_percentage;
    std::optional<std::string_view> partitioned_profile;
    std::optional<Quantity> interface_count;

    bool sliced() const {
        return sliced_memory_percentage.value_or(0) != 0 ||
               sliced_cores_percentage.value_or(0) != 0;
    }
    bool partitioned() const { return partitioned_profile && !partitioned_profile->empty(); }
    bool operator==(const Resources&) const = default;
};

// An entry of additionalVolumes: a Kubernetes volume source beside its mount.
struct Volume {
    explicit Volume(Memory memory) : sources(memory) {}

    bool is_object = false;  // an entry of another type is the structural check's to report
    std::string_view name;
    std::optional<std::string_view> mount_path;
    std::optional<std::string_view> sub_path;
    std::optional<std::string_view> sub_path_expr;
    bool read_only = false;
    std::optional<std::string_view> host_path;  // hostPath.path, for a hostPath volume
    // The members other than the mount fields that hold an object: hostPath,
    // persistentVolumeClaim, configMap, or any source a newer Kubernetes adds.
    List<std::string_view> sources;

    bool operator==(const Volume&) const = default;
};

struct Role {
    explicit Role(Memory memory)
        : ports(memory), extra_args(memory), env(memory), additional_volumes(memory) {}

    std::size_t index = 0;  // position in spec.roles
    std::string_view name;
    RoleKind kind = RoleKind::server;
    std::int64_t replicas = 1;
    std::int64_t size = 1;
    std::optional<std::string_view> instance_type;
    Resources resources;
    std::optional<std::string_view> image;
    List<PortSpec> ports;  // index k is spec.roles[i].ports[k]
    // Lists of strings keep one entry per JSON element; a non-string element becomes "",
    // which is never a flag, so indices stay aligned with the field paths.
    std::optional<List<std::string_view>> command;
    List<std::string_view> extra_args;
    List<EnvVar> env;
    List<Volume> additional_volumes;  // index k is additionalVolumes[k]
    std::optional<std::int64_t> elastic_ep_width;
    bool has_elastic_ep = false;
    bool privileged = false;
    std::optional<std::string_view> topology_required_level;

    bool takes_over() const { return command.has_value(); }
    bool operator==(const Role&) const = default;
};

struct Router {
    explicit Router(Memory memory) : extra_args(memory) {}

    std::string_view name;
    std::optional<std::string_view> image;
    std::optional<std::int64_t> replicas;
    List<std::string_view> extra_args;
    std::optional<std::int64_t> request_timeout_seconds;
    std::optional<std::int64_t> disaggregation_threshold_tokens;

    bool operator==(const Router&) const = default;
};

struct KvCache {
    std::optional<std::string_view> pool_name;
    bool operator==(const KvCache&) const = default;
};

struct ModelDeployment {
    explicit ModelDeployment(Memory memory) : roles(memory) {}

    std::string_view name;
    std::string_view namespace_name;
    bool being_deleted = false;  // metadata.deletionTimestamp is set
    std::string_view model_name;
    std::optional<std::string_view> artifact_name;  // set ("" without a name) with artifactRef
    EngineKind engine = EngineKind::unknown;
    std::string_view engine_name;  // as written, for messages
    std::optional<std::string_view> engine_version;
    std::optional<KvCache> kv_cache;
    std::optional<std::string_view> kv_transfer_protocol;  // spec.kvTransfer.protocol
    std::optional<Router> router;
    List<Role> roles;

    // Equal fields, texts compared by their characters (tests compare two ways of reading).
    bool operator==(const ModelDeployment&) const = default;
};

std::string_view to_string(EngineKind engine);
std::string_view to_string(RoleKind kind);

}  // namespace mdadmit::rules
