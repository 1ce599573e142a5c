#include "mdadmit/rules/model_builder.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "mdadmit/rules/limits.hpp"
#include "model_names.hpp"

// What each member of a ModelDeployment's JSON sets in the model: the fields each object reads
// and the member functions of ModelBuilder that read them (model_builder.cpp has the events).

namespace mdadmit::rules {

namespace {

using namespace std::string_view_literals;

// The members each object reads, numbered by their place; decode.cpp reads the same.
enum RootField { root_metadata, root_spec };
constexpr std::array root_fields{"metadata"sv, "spec"sv};
enum MetadataField { metadata_name, metadata_namespace, metadata_deletion };
constexpr std::array metadata_fields{"name"sv, "namespace"sv, "deletionTimestamp"sv};
enum SpecField {
    spec_model,
    spec_engine,
    spec_kv_cache,
    spec_kv_transfer,
    spec_router,
    spec_roles
};
constexpr std::array spec_fields{"model"sv,      "engine"sv, "kvCache"sv,
                                 "kvTransfer"sv, "router"sv, "roles"sv};
enum ModelField { model_name, model_artifact_ref };
constexpr std::array model_fields{"name"sv, "artifactRef"sv};
enum EngineField { engine_name, engine_version };
constexpr std::array engine_fields{"name"sv, "version"sv};
enum RouterField {
    router_name,
    router_image,
    router_replicas,
    router_extra_args,
    router_request_timeout,
    router_disaggregation_threshold
};
constexpr std::array router_fields{"name"sv,
                                   "image"sv,
                                   "replicas"sv,
                                   "extraArgs"sv,
                                   "requestTimeoutSeconds"sv,
                                   "disaggregationThresholdTokens"sv};
enum RoleField {
    role_name,
    role_kind_field,
    role_replicas,
    role_size,
    role_instance_type,
    role_resources,
    role_image,
    role_ports,
    role_command,
    role_extra_args,
    role_env,
    role_volumes,
    role_privileged,
    role_topology,
    role_elastic_ep
};
constexpr std::array role_fields{"name"sv,       "kind"sv,         "replicas"sv,
                                 "size"sv,       "instanceType"sv, "resources"sv,
                                 "image"sv,      "ports"sv,        "command"sv,
                                 "extraArgs"sv,  "env"sv,          "additionalVolumes"sv,
                                 "privileged"sv, "topology"sv,     "elasticEp"sv};
enum ResourcesField {
    resources_accelerator,
    resources_sliced_memory,
    resources_sliced_cores,
    resources_partitioned_profile,
    resources_interface
};
constexpr std::array resources_fields{"accelerator"sv, "acceleratorSlicedMemoryPercentage"sv,
                                      "acceleratorSlicedCoresPercentage"sv,
                                      "acceleratorPartitionedProfile"sv, "interface"sv};
enum PortField { port_port, port_protocol };
constexpr std::array port_fields{"port"sv, "protocol"sv};
enum EnvVarField { env_name, env_value };
constexpr std::array env_var_fields{"name"sv, "value"sv};
enum VolumeField {
    volume_name,
    volume_mount_path,
    volume_sub_path,
    volume_sub_path_expr,
    volume_read_only,
    volume_host_path
};
constexpr std::array volume_fields{"name"sv,        "mountPath"sv, "subPath"sv,
                                   "subPathExpr"sv, "readOnly"sv,  "hostPath"sv};
// artifactRef.name, kvCache.poolRef, poolRef.name, kvTransfer.protocol, hostPath.path,
// topology.requiredLevel, elasticEp.width: objects of one member read.
constexpr std::array name_fields{"name"sv};
constexpr std::array pool_ref_fields{"poolRef"sv};
constexpr std::array protocol_fields{"protocol"sv};
constexpr std::array path_fields{"path"sv};
constexpr std::array required_level_fields{"requiredLevel"sv};
constexpr std::array width_fields{"width"sv};

// A field's number, or -1. Most keys differ from most fields in size or first letter, which
// are compared before the whole key.
template <std::size_t N>
int field_in(const std::array<std::string_view, N>& fields, std::string_view key) {
    for (std::size_t i = 0; i < N; ++i) {
        if (fields[i].size() == key.size() && fields[i][0] == key[0] && fields[i] == key) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

}  // namespace

int ModelBuilder::field_number(Frame frame, std::string_view key) {
    switch (frame) {
        case Frame::root:
            return field_in(root_fields, key);
        case Frame::metadata:
            return field_in(metadata_fields, key);
        case Frame::spec:
            return field_in(spec_fields, key);
        case Frame::model:
            return field_in(model_fields, key);
        case Frame::artifact_ref:
        case Frame::pool_ref:
            return field_in(name_fields, key);
        case Frame::engine:
            return field_in(engine_fields, key);
        case Frame::kv_cache:
            return field_in(pool_ref_fields, key);
        case Frame::kv_transfer:
            return field_in(protocol_fields, key);
        case Frame::router:
            return field_in(router_fields, key);
        case Frame::role:
            return field_in(role_fields, key);
        case Frame::resources:
            return field_in(resources_fields, key);
        case Frame::port:
            return field_in(port_fields, key);
        case Frame::env_var:
            return field_in(env_var_fields, key);
        case Frame::volume:
            return field_in(volume_fields, key);
        case Frame::host_path:
            return field_in(path_fields, key);
        case Frame::topology:
            return field_in(required_level_fields, key);
        case Frame::elastic_ep:
            return field_in(width_fields, key);
        default:
            break;  // a list: its elements have no keys
    }
    return -1;
}

void ModelBuilder::key(std::string_view text) {
    if (gave_up_ || ignored_ > 0) {
        return;
    }
    if (open_ == 0) {
        give_up();  // a key outside the value
        return;
    }
    Open& top = frames_[open_ - 1];
    field_ = field_number(top.frame, text);
    if (field_ >= 0) {
        const std::uint32_t bit = 1u << field_;
        if ((top.seen & bit) != 0) {
            give_up();  // a DOM keeps the last copy, which events cannot know is last
            return;
        }
        top.seen |= bit;
    }
    if (top.frame == Frame::volume && !is_mount_field(text)) {
        // Any member that holds an object names a volume source, in the order written.
        if (field_ < 0) {
            if (std::find(volume_keys_.begin(), volume_keys_.end(), text) != volume_keys_.end()) {
                give_up();
                return;
            }
            volume_keys_.push_back(keep(text));
            source_key_ = volume_keys_.back();
        } else {
            source_key_ = volume_fields[static_cast<std::size_t>(field_)];
        }
    }
}

std::optional<ModelDeployment> ModelBuilder::finish() {
    // Without spec the decoder reports the missing field.
    if (gave_up_ || !ended_ || (frames_[0].seen & (1u << root_spec)) == 0) {
        return std::nullopt;
    }
    return std::move(model_);
}

void ModelBuilder::member(Frame frame, int field, const Value& v) {
    if (const auto source = std::exchange(source_key_, std::nullopt);
        source && v.kind == Kind::object) {
        model_.roles.back().additional_volumes.back().sources.push_back(*source);
    }
    if (field < 0) {
        return;
    }
    switch (frame) {
        case Frame::root:
            opens(v, Kind::object, field == root_metadata ? Frame::metadata : Frame::spec);
            return;
        case Frame::metadata:
            metadata_member(field, v);
            return;
        case Frame::spec:
            spec_member(field, v);
            return;
        case Frame::model:
            if (field == model_name) {
                read_text(v, model_.model_name);
            } else if (opens(v, Kind::object, Frame::artifact_ref)) {
                model_.artifact_name = ""sv;
            }
            return;
        case Frame::artifact_ref:
            read_text(v, *model_.artifact_name);
            return;
        case Frame::engine:
            engine_member(field, v);
            return;
        case Frame::kv_cache:
            opens(v, Kind::object, Frame::pool_ref);
            return;
        case Frame::pool_ref:
            read_string(v, model_.kv_cache->pool_name);
            return;
        case Frame::kv_transfer:
            read_string(v, model_.kv_transfer_protocol);
            return;
        case Frame::router:
            router_member(field, v);
            return;
        case Frame::role:
            role_member(field, v);
            return;
        case Frame::resources:
            resources_member(field, v);
            return;
        case Frame::port: {
            PortSpec& port = model_.roles.back().ports.back();
            if (field == port_port) {
                read_integer(v, port.port);
            } else if (std::optional<std::string_view> protocol; read_string(v, protocol)) {
                port.protocol = protocol.value_or(port.protocol);
            }
            return;
        }
        case Frame::env_var: {
            EnvVar& env = model_.roles.back().env.back();
            read_text(v, field == env_name ? env.name : env.value);
            return;
        }
        case Frame::volume:
            volume_member(field, v);
            return;
        case Frame::host_path:
            read_text(v, *model_.roles.back().additional_volumes.back().host_path);
            return;
        case Frame::topology:
            read_string(v, model_.roles.back().topology_required_level);
            return;
        case Frame::elastic_ep:
            read_integer(v, model_.roles.back().elastic_ep_width);
            return;
        default:
            return;
    }
}

void ModelBuilder::metadata_member(int field, const Value& v) {
    switch (field) {
        case metadata_name:
            read_text(v, model_.name);
            return;
        case metadata_namespace:
            read_text(v, model_.namespace_name);
            return;
        default:
            model_.being_deleted = v.kind != Kind::null;  // set, whatever its value
            return;
    }
}

void ModelBuilder::spec_member(int field, const Value& v) {
    switch (field) {
        case spec_model:
            opens(v, Kind::object, Frame::model);
            return;
        case spec_engine:
            opens(v, Kind::object, Frame::engine);
            return;
        case spec_kv_cache:
            if (opens(v, Kind::object, Frame::kv_cache)) {
                model_.kv_cache.emplace();
            }
            return;
        case spec_kv_transfer:
            opens(v, Kind::object, Frame::kv_transfer);
            return;
        case spec_router:
            if (opens(v, Kind::object, Frame::router)) {
                model_.router.emplace(memory_);
            }
            return;
        default:
            if (opens(v, Kind::array, Frame::roles)) {
                // At most this many are built (beyond, the builder gives up): no role is moved.
                model_.roles.reserve(limits::max_roles_read);
            }
            return;
    }
}

void ModelBuilder::engine_member(int field, const Value& v) {
    if (field == engine_version) {
        read_string(v, model_.engine_version);
        return;
    }
    std::optional<std::string_view> name;
    if (read_string(v, name) && name) {
        model_.engine_name = *name;
        model_.engine = engine_kind(*name);
        if (model_.engine == EngineKind::unknown) {
            give_up();  // the decoder reports an unknown engine
        }
    }
}

void ModelBuilder::router_member(int field, const Value& v) {
    Router& router = *model_.router;
    switch (field) {
        case router_name:
            read_text(v, router.name);
            return;
        case router_image:
            read_string(v, router.image);
            return;
        case router_replicas:
            read_integer(v, router.replicas);
            return;
        case router_extra_args:
            opens(v, Kind::array, Frame::router_args);
            return;
        case router_request_timeout:
            read_integer(v, router.request_timeout_seconds);
            return;
        default:
            read_integer(v, router.disaggregation_threshold_tokens);
            return;
    }
}

void ModelBuilder::role_member(int field, const Value& v) {
    Role& role = model_.roles.back();
    std::optional<std::int64_t> count;
    switch (field) {
        case role_name:
            read_text(v, role.name);
            return;
        case role_kind_field: {
            std::optional<std::string_view> kind;
            if (read_string(v, kind) && kind) {
                role.kind = role_kind(*kind);
                if (role.kind == RoleKind::unknown) {
                    give_up();  // the decoder reports an unknown role kind
                }
            }
            return;
        }
        case role_replicas:
        case role_size:
            if (read_integer(v, count) && count) {
                (field == role_replicas ? role.replicas : role.size) = *count;
            }
            return;
        case role_instance_type:
            read_string(v, role.instance_type);
            return;
        case role_resources:
            role.resources.present = opens(v, Kind::object, Frame::resources);
            return;
        case role_image:
            read_string(v, role.image);
            return;
        case role_ports:
            opens(v, Kind::array, Frame::ports);
            return;
        case role_command:
            if (opens(v, Kind::array, Frame::command)) {
                role.command.emplace(memory_);
            }
            return;
        case role_extra_args:
            opens(v, Kind::array, Frame::role_args);
            return;
        case role_env:
            opens(v, Kind::array, Frame::env);
            return;
        case role_volumes:
            opens(v, Kind::array, Frame::volumes);
            return;
        case role_privileged:
            read_boolean(v, role.privileged);
            return;
        case role_topology:
            opens(v, Kind::object, Frame::topology);
            return;
        default:
            role.has_elastic_ep = opens(v, Kind::object, Frame::elastic_ep);
            return;
    }
}

void ModelBuilder::resources_member(int field, const Value& v) {
    Resources& resources = model_.roles.back().resources;
    switch (field) {
        case resources_accelerator:
            read_quantity(v, resources.accelerator);
            return;
        case resources_sliced_memory:
            read_integer(v, resources.sliced_memory_percentage);
            return;
        case resources_sliced_cores:
            read_integer(v, resources.sliced_cores_percentage);
            return;
        case resources_partitioned_profile:
            read_string(v, resources.partitioned_profile);
            return;
        default:
            read_quantity(v, resources.interface_count);
            return;
    }
}

void ModelBuilder::volume_member(int field, const Value& v) {
    Volume& volume = model_.roles.back().additional_volumes.back();
    switch (field) {
        case volume_name:
            read_text(v, volume.name);
            return;
        case volume_mount_path:
            read_string(v, volume.mount_path);
            return;
        case volume_sub_path:
            read_string(v, volume.sub_path);
            return;
        case volume_sub_path_expr:
            read_string(v, volume.sub_path_expr);
            return;
        case volume_read_only:
            read_boolean(v, volume.read_only);
            return;
        default:
            if (opens(v, Kind::object, Frame::host_path)) {
                volume.host_path = ""sv;
            }
            return;
    }
}

}  // namespace mdadmit::rules
