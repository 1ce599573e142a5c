#include "mdadmit/rules/decode.hpp"

#include <algorithm>
#include <array>
#include <boost/json/value.hpp>

#include "field_path.hpp"
#include "json_kind.hpp"
#include "mdadmit/rules/limits.hpp"
#include "model_names.hpp"
#include "quantity_json.hpp"

namespace mdadmit::rules {

namespace {

namespace json = boost::json;
using namespace std::string_view_literals;

// Reads typed values out of untrusted JSON, leaving a wrong-typed value absent and noting
// the problem with its field path.
class Reader {
  public:
    Reader(std::vector<DecodeProblem>& problems, Memory memory)
        : problems_(problems), memory_(memory) {}

    Memory memory() const { return memory_; }

    static const json::value* member(const json::object* object, std::string_view key) {
        return object == nullptr ? nullptr : object->if_contains(key);
    }

    const json::object* object(const json::value* value, const FieldPath& path) {
        if (value == nullptr || value->is_null()) {
            return nullptr;
        }
        if (!value->is_object()) {
            mismatch(*value, path, "an object");
            return nullptr;
        }
        return &value->get_object();
    }

    const json::array* array(const json::value* value, const FieldPath& path) {
        if (value == nullptr || value->is_null()) {
            return nullptr;
        }
        if (!value->is_array()) {
            mismatch(*value, path, "an array");
            return nullptr;
        }
        return &value->get_array();
    }

    std::optional<bool> boolean(const json::value* value, const FieldPath& path) {
        if (value == nullptr || value->is_null()) {
            return std::nullopt;
        }
        if (!value->is_bool()) {
            mismatch(*value, path, "a boolean");
            return std::nullopt;
        }
        return value->get_bool();
    }

    std::optional<std::string_view> string(const json::value* value, const FieldPath& path) {
        if (value == nullptr || value->is_null()) {
            return std::nullopt;
        }
        if (!value->is_string()) {
            mismatch(*value, path, "a string");
            return std::nullopt;
        }
        return std::string_view(value->get_string());
    }

    std::optional<std::int64_t> integer(const json::value* value, const FieldPath& path) {
        if (value == nullptr || value->is_null()) {
            return std::nullopt;
        }
        if (value->is_int64()) {
            return value->get_int64();
        }
        if (value->is_uint64() && value->get_uint64() <= INT64_MAX) {
            return static_cast<std::int64_t>(value->get_uint64());
        }
        mismatch(*value, path, "an integer");
        return std::nullopt;
    }

    // A Kubernetes quantity: a JSON integer, or a string in the quantity grammar.
    std::optional<Quantity> quantity(const json::value* value, const FieldPath& path) {
        if (value == nullptr || value->is_null()) {
            return std::nullopt;
        }
        auto parsed = quantity_of(*value);
        if (!parsed) {
            problem(path, quantity_problem(*value));
        }
        return parsed;
    }

    // Fills `out` with one entry per element (bounded), "" for a non-string element, so
    // indices stay aligned. False when the value is not a list.
    bool strings(const json::value* value, const FieldPath& path, List<std::string_view>& out) {
        const json::array* items = array(value, path);
        if (items == nullptr) {
            return false;
        }
        const std::size_t count = std::min(items->size(), limits::max_list_entries_read);
        out.reserve(count);
        for (std::size_t i = 0; i < count; ++i) {
            out.push_back(string(&(*items)[i], path.element(i)).value_or(std::string_view()));
        }
        return true;
    }

    // Fills `out` with one decoded entry per element of a list of objects (bounded), so
    // indices stay aligned with field paths; an element that is not an object is decoded
    // from null.
    template <typename T>
    void objects(const json::value* value, const FieldPath& path,
                 T (*decode)(Reader&, const json::object*, const FieldPath&), List<T>& out) {
        const json::array* items = array(value, path);
        if (items == nullptr) {
            return;
        }
        const std::size_t count = std::min(items->size(), limits::max_list_entries_read);
        out.reserve(count);
        for (std::size_t k = 0; k < count; ++k) {
            const FieldPath item_path = path.element(k);
            out.push_back(decode(*this, object(&(*items)[k], item_path), item_path));
        }
    }

    void problem(const FieldPath& path, std::string message) {
        problems_.push_back({path.text(), std::move(message)});
    }

  private:
    void mismatch(const json::value& value, const FieldPath& path, std::string_view expected) {
        problem(path, "expected " + std::string(expected) + ", got " +
                          std::string(json_kind_name(value)));
    }

    std::vector<DecodeProblem>& problems_;
    Memory memory_;
};

// The members of an object that a decoder reads, found in one pass over it, with their field
// paths. Boost.JSON searches a small object linearly, so reading a role's fifteen fields one
// lookup at a time would scan the role fifteen times. A parsed object's keys are unique, so
// each key names one member at most.
template <std::size_t N>
class Members {
  public:
    Members(const json::object* object, const std::array<std::string_view, N>& keys,
            const FieldPath& path)
        : keys_(keys), path_(path) {
        if (object == nullptr) {
            return;
        }
        for (const auto& member : *object) {
            const std::string_view key = member.key();
            for (std::size_t i = 0; i < N; ++i) {
                if (keys[i] == key) {
                    found_[i] = &member.value();
                    break;
                }
            }
        }
    }

    const json::value* operator[](std::size_t field) const { return found_[field]; }
    FieldPath path(std::size_t field) const { return path_.member(keys_[field]); }

  private:
    const std::array<std::string_view, N>& keys_;
    const FieldPath& path_;
    std::array<const json::value*, N> found_{};
};

Resources decode_resources(Reader& in, const json::value* value, const FieldPath& path) {
    enum Field : std::size_t {
        f_accelerator,
        f_sliced_memory,
        f_sliced_cores,
        f_partitioned_profile,
        f_interface,
        field_count
    };
    static constexpr std::array keys{"accelerator"sv, "acceleratorSlicedMemoryPercentage"sv,
                                     "acceleratorSlicedCoresPercentage"sv,
                                     "acceleratorPartitionedProfile"sv, "interface"sv};
    static_assert(keys.size() == field_count);
    Resources out;
    const json::object* object = in.object(value, path);
    const Members field(object, keys, path);
    out.present = object != nullptr;
    out.accelerator = in.quantity(field[f_accelerator], field.path(f_accelerator));
    out.sliced_memory_percentage = in.integer(field[f_sliced_memory], field.path(f_sliced_memory));
    out.sliced_cores_percentage = in.integer(field[f_sliced_cores], field.path(f_sliced_cores));
    out.partitioned_profile =
        in.string(field[f_partitioned_profile], field.path(f_partitioned_profile));
    out.interface_count = in.quantity(field[f_interface], field.path(f_interface));
    return out;
}

PortSpec decode_port(Reader& in, const json::object* item, const FieldPath& path) {
    PortSpec port;
    port.port = in.integer(Reader::member(item, "port"), path.member("port"));
    if (auto protocol = in.string(Reader::member(item, "protocol"), path.member("protocol"))) {
        port.protocol = *protocol;
    }
    return port;
}

EnvVar decode_env_var(Reader& in, const json::object* item, const FieldPath& path) {
    EnvVar env;
    env.name = in.string(Reader::member(item, "name"), path.member("name")).value_or("");
    env.value = in.string(Reader::member(item, "value"), path.member("value")).value_or("");
    return env;
}

Volume decode_volume(Reader& in, const json::object* item, const FieldPath& path) {
    Volume volume(in.memory());
    volume.name = in.string(Reader::member(item, "name"), path.member("name")).value_or("");
    volume.mount_path = in.string(Reader::member(item, "mountPath"), path.member("mountPath"));
    volume.sub_path = in.string(Reader::member(item, "subPath"), path.member("subPath"));
    volume.sub_path_expr =
        in.string(Reader::member(item, "subPathExpr"), path.member("subPathExpr"));
    volume.read_only =
        in.boolean(Reader::member(item, "readOnly"), path.member("readOnly")).value_or(false);
    const FieldPath host_path = path.member("hostPath");
    if (const auto* host = in.object(Reader::member(item, "hostPath"), host_path)) {
        volume.host_path =
            in.string(Reader::member(host, "path"), host_path.member("path")).value_or("");
    }
    if (item != nullptr) {
        volume.is_object = true;
        for (const auto& member : *item) {
            if (!is_mount_field(member.key()) && member.value().is_object()) {
                volume.sources.emplace_back(member.key());
            }
        }
    }
    return volume;
}

Role decode_role(Reader& in, const json::object* object, std::size_t index, const FieldPath& path) {
    enum Field : std::size_t {
        f_name,
        f_kind,
        f_replicas,
        f_size,
        f_instance_type,
        f_resources,
        f_image,
        f_ports,
        f_command,
        f_extra_args,
        f_env,
        f_additional_volumes,
        f_privileged,
        f_topology,
        f_elastic_ep,
        field_count
    };
    static constexpr std::array keys{"name"sv,       "kind"sv,         "replicas"sv,
                                     "size"sv,       "instanceType"sv, "resources"sv,
                                     "image"sv,      "ports"sv,        "command"sv,
                                     "extraArgs"sv,  "env"sv,          "additionalVolumes"sv,
                                     "privileged"sv, "topology"sv,     "elasticEp"sv};
    static_assert(keys.size() == field_count);
    const Members field(object, keys, path);
    Role role(in.memory());
    role.index = index;
    role.name = in.string(field[f_name], field.path(f_name)).value_or("");
    if (auto kind = in.string(field[f_kind], field.path(f_kind))) {
        role.kind = role_kind(*kind);
        if (role.kind == RoleKind::unknown) {
            in.problem(field.path(f_kind), "unknown role kind \"" + std::string(*kind) +
                                               "\"; expected Server, Prefill, Decode or Encode");
        }
    }
    role.replicas = in.integer(field[f_replicas], field.path(f_replicas)).value_or(1);
    role.size = in.integer(field[f_size], field.path(f_size)).value_or(1);
    role.instance_type = in.string(field[f_instance_type], field.path(f_instance_type));
    role.resources = decode_resources(in, field[f_resources], field.path(f_resources));
    role.image = in.string(field[f_image], field.path(f_image));
    in.objects<PortSpec>(field[f_ports], field.path(f_ports), decode_port, role.ports);
    List<std::string_view> command(in.memory());
    if (in.strings(field[f_command], field.path(f_command), command)) {
        role.command.emplace(std::move(command));
    }
    in.strings(field[f_extra_args], field.path(f_extra_args), role.extra_args);
    in.objects<EnvVar>(field[f_env], field.path(f_env), decode_env_var, role.env);
    in.objects<Volume>(field[f_additional_volumes], field.path(f_additional_volumes), decode_volume,
                       role.additional_volumes);
    role.privileged = in.boolean(field[f_privileged], field.path(f_privileged)).value_or(false);
    const FieldPath topology_path = field.path(f_topology);
    if (const auto* topology = in.object(field[f_topology], topology_path)) {
        role.topology_required_level = in.string(Reader::member(topology, "requiredLevel"),
                                                 topology_path.member("requiredLevel"));
    }
    const FieldPath elastic_path = field.path(f_elastic_ep);
    if (const auto* elastic = in.object(field[f_elastic_ep], elastic_path)) {
        role.has_elastic_ep = true;
        role.elastic_ep_width =
            in.integer(Reader::member(elastic, "width"), elastic_path.member("width"));
    }
    return role;
}

std::optional<Router> decode_router(Reader& in, const json::value* value, const FieldPath& path) {
    const json::object* object = in.object(value, path);
    if (object == nullptr) {
        return std::nullopt;
    }
    enum Field : std::size_t {
        f_name,
        f_image,
        f_replicas,
        f_extra_args,
        f_request_timeout,
        f_disaggregation_threshold,
        field_count
    };
    static constexpr std::array keys{"name"sv,
                                     "image"sv,
                                     "replicas"sv,
                                     "extraArgs"sv,
                                     "requestTimeoutSeconds"sv,
                                     "disaggregationThresholdTokens"sv};
    static_assert(keys.size() == field_count);
    const Members field(object, keys, path);
    Router router(in.memory());
    router.name = in.string(field[f_name], field.path(f_name)).value_or("");
    router.image = in.string(field[f_image], field.path(f_image));
    router.replicas = in.integer(field[f_replicas], field.path(f_replicas));
    in.strings(field[f_extra_args], field.path(f_extra_args), router.extra_args);
    router.request_timeout_seconds =
        in.integer(field[f_request_timeout], field.path(f_request_timeout));
    router.disaggregation_threshold_tokens =
        in.integer(field[f_disaggregation_threshold], field.path(f_disaggregation_threshold));
    return router;
}

}  // namespace

Decoded decode_model_deployment(const json::value& value, Memory memory) {
    Decoded out{ModelDeployment(memory), {}};
    Reader in(out.problems, memory);
    const FieldPath root;
    if (!value.is_object()) {
        in.problem(root, "a ModelDeployment must be a JSON object, got " +
                             std::string(json_kind_name(value)));
        return out;
    }
    const json::object* object = &value.get_object();
    ModelDeployment& md = out.model;

    const FieldPath metadata_path = root.member("metadata");
    const json::object* metadata = in.object(Reader::member(object, "metadata"), metadata_path);
    enum MetadataField : std::size_t { f_name, f_namespace, f_deletion, metadata_field_count };
    static constexpr std::array metadata_keys{"name"sv, "namespace"sv, "deletionTimestamp"sv};
    static_assert(metadata_keys.size() == metadata_field_count);
    const Members metadata_field(metadata, metadata_keys, metadata_path);
    md.name = in.string(metadata_field[f_name], metadata_field.path(f_name)).value_or("");
    md.namespace_name =
        in.string(metadata_field[f_namespace], metadata_field.path(f_namespace)).value_or("");
    const json::value* deletion = metadata_field[f_deletion];
    md.being_deleted = deletion != nullptr && !deletion->is_null();

    const FieldPath spec_path = root.member("spec");
    const json::value* spec_value = Reader::member(object, "spec");
    if (spec_value == nullptr) {
        in.problem(spec_path, "required field is missing");
        return out;
    }
    const json::object* spec = in.object(spec_value, spec_path);
    enum SpecField : std::size_t {
        f_model,
        f_engine,
        f_kv_cache,
        f_kv_transfer,
        f_router,
        f_roles,
        spec_field_count
    };
    static constexpr std::array spec_keys{"model"sv,      "engine"sv, "kvCache"sv,
                                          "kvTransfer"sv, "router"sv, "roles"sv};
    static_assert(spec_keys.size() == spec_field_count);
    const Members spec_field(spec, spec_keys, spec_path);

    const FieldPath model_path = spec_field.path(f_model);
    const json::object* model = in.object(spec_field[f_model], model_path);
    md.model_name =
        in.string(Reader::member(model, "name"), model_path.member("name")).value_or("");
    const FieldPath artifact_path = model_path.member("artifactRef");
    if (const auto* artifact = in.object(Reader::member(model, "artifactRef"), artifact_path)) {
        md.artifact_name =
            in.string(Reader::member(artifact, "name"), artifact_path.member("name")).value_or("");
    }

    const FieldPath engine_path = spec_field.path(f_engine);
    const json::object* engine = in.object(spec_field[f_engine], engine_path);
    if (auto name = in.string(Reader::member(engine, "name"), engine_path.member("name"))) {
        md.engine = engine_kind(*name);
        md.engine_name = *name;
        if (md.engine == EngineKind::unknown) {
            in.problem(engine_path.member("name"),
                       "unknown engine \"" + std::string(*name) + "\"; expected vLLM or SGLang");
        }
    }
    md.engine_version = in.string(Reader::member(engine, "version"), engine_path.member("version"));

    const FieldPath kv_path = spec_field.path(f_kv_cache);
    if (const auto* kv = in.object(spec_field[f_kv_cache], kv_path)) {
        KvCache cache;
        const FieldPath pool_path = kv_path.member("poolRef");
        if (const auto* pool = in.object(Reader::member(kv, "poolRef"), pool_path)) {
            cache.pool_name = in.string(Reader::member(pool, "name"), pool_path.member("name"));
        }
        md.kv_cache = std::move(cache);
    }

    const FieldPath transfer_path = spec_field.path(f_kv_transfer);
    if (const auto* transfer = in.object(spec_field[f_kv_transfer], transfer_path)) {
        md.kv_transfer_protocol =
            in.string(Reader::member(transfer, "protocol"), transfer_path.member("protocol"));
    }

    md.router = decode_router(in, spec_field[f_router], spec_field.path(f_router));

    const FieldPath roles_path = spec_field.path(f_roles);
    if (const auto* roles = in.array(spec_field[f_roles], roles_path)) {
        const std::size_t count = std::min(roles->size(), limits::max_roles_read);
        md.roles.reserve(count);
        for (std::size_t i = 0; i < count; ++i) {
            const FieldPath role_path = roles_path.element(i);
            if (const auto* role = in.object(&(*roles)[i], role_path)) {
                md.roles.push_back(decode_role(in, role, i, role_path));
            }
        }
    }
    return out;
}

}  // namespace mdadmit::rules
