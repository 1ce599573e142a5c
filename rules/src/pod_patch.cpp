#include "mdadmit/rules/pod_patch.hpp"

#include <algorithm>
#include <boost/json/value_from.hpp>
#include <vector>

#include "mdadmit/rules/arg_stream.hpp"
#include "mdadmit/rules/decode.hpp"

namespace mdadmit::rules {

namespace {

namespace json = boost::json;

const json::object* object_at(const json::value& value, std::string_view key) {
    const json::object* object = value.if_object();
    const json::value* child = object != nullptr ? object->if_contains(key) : nullptr;
    return child != nullptr ? child->if_object() : nullptr;
}

const json::array* array_at(const json::object* object, std::string_view key) {
    const json::value* child = object != nullptr ? object->if_contains(key) : nullptr;
    return child != nullptr ? child->if_array() : nullptr;
}

std::optional<std::string> label(const json::object* labels, std::string_view key) {
    const json::value* value = labels != nullptr ? labels->if_contains(key) : nullptr;
    if (value == nullptr || !value->is_string()) {
        return std::nullopt;
    }
    return std::string(value->get_string());
}

json::object op(std::string_view kind, std::string path) {
    return json::object{{"op", kind}, {"path", std::move(path)}};
}

// Where a container lives in the Pod spec: "containers" or "initContainers" (native sidecars).
struct ContainerRef {
    std::string list;
    std::size_t index = 0;
    const json::object* container = nullptr;
};

// The container named `name` among the containers and native sidecars; with `or_first`, the
// Pod's first container when none has that name. An empty name is the first container.
std::optional<ContainerRef> find_container(const json::value& pod, const std::string& name,
                                           bool or_first) {
    const json::object* spec = object_at(pod, "spec");
    std::optional<ContainerRef> first;
    for (const char* list : {"containers", "initContainers"}) {
        const json::array* containers = array_at(spec, list);
        if (containers == nullptr) {
            continue;
        }
        for (std::size_t i = 0; i < containers->size(); ++i) {
            const json::object* container = (*containers)[i].if_object();
            if (container == nullptr) {
                continue;
            }
            if (!first && std::string_view(list) == "containers") {
                first = ContainerRef{list, i, container};
            }
            if (!name.empty() && label(container, "name") == name) {
                return ContainerRef{list, i, container};
            }
        }
    }
    return name.empty() || or_first ? first : std::nullopt;
}

// Ensures one flag in a container's args, editing `args` as the patch will, so that the
// indices of later operations stay right.
void ensure_flag(const FlagToEnsure& flag, const std::string& args_path,
                 std::vector<std::string>& args, bool& args_exist, json::array& patch) {
    const std::vector<std::string> wanted =
        flag.value.empty()    ? std::vector<std::string>{flag.flag}
        : flag.separate_value ? std::vector<std::string>{flag.flag, flag.value}
                              : std::vector<std::string>{flag.flag + "=" + flag.value};
    const ArgStream stream(args);
    for (const auto& excluded : flag.excludes) {
        if (stream.has({excluded})) {
            return;
        }
    }
    const FlagOccurrence* found = stream.last({flag.flag});
    if (found == nullptr) {
        if (!args_exist) {
            json::object add = op("add", args_path);
            add["value"] = json::value_from(wanted);
            patch.push_back(std::move(add));
            args_exist = true;
            args.insert(args.end(), wanted.begin(), wanted.end());
            return;
        }
        // After a bare `--` the engine reads only positional arguments: a flag goes before it.
        const auto end_of_flags = std::find(args.begin(), args.end(), "--");
        std::size_t at = static_cast<std::size_t>(end_of_flags - args.begin());
        for (const auto& token : wanted) {
            json::object add =
                op("add", args_path + "/" + (at == args.size() ? "-" : std::to_string(at)));
            add["value"] = token;
            patch.push_back(std::move(add));
            args.insert(args.begin() + static_cast<std::ptrdiff_t>(at++), token);
        }
        return;
    }
    const std::size_t at = found->flag_index;
    const bool equals_form = args[at].size() > flag.flag.size();
    if (flag.value.empty()) {
        if (equals_form) {
            json::object replace = op("replace", args_path + "/" + std::to_string(at));
            replace["value"] = flag.flag;
            patch.push_back(std::move(replace));
            args[at] = flag.flag;
        }
        return;
    }
    if (found->value && *found->value == flag.value) {
        return;
    }
    if (equals_form) {
        json::object replace = op("replace", args_path + "/" + std::to_string(at));
        replace["value"] = flag.flag + "=" + flag.value;
        patch.push_back(std::move(replace));
        args[at] = flag.flag + "=" + flag.value;
    } else if (found->value) {
        json::object replace = op("replace", args_path + "/" + std::to_string(found->value_index));
        replace["value"] = flag.value;
        patch.push_back(std::move(replace));
        args[found->value_index] = flag.value;
    } else {
        // A bare flag that needs a value: the value goes right after it.
        json::object add = op("add", args_path + "/" + std::to_string(at + 1));
        add["value"] = flag.value;
        patch.push_back(std::move(add));
        args.insert(args.begin() + static_cast<std::ptrdiff_t>(at + 1), flag.value);
    }
}

void ensure_flags(const json::value& pod, const std::vector<FlagToEnsure>& flags, FlagTarget target,
                  const std::string& container_name, json::array& patch) {
    // The engine is the Pod's main container: the first one when none has the configured
    // name. A sidecar is only ever found by its name.
    const bool or_first = target == FlagTarget::engine;
    std::vector<const FlagToEnsure*> mine;
    for (const auto& flag : flags) {
        if (flag.target == target) {
            mine.push_back(&flag);
        }
    }
    if (mine.empty()) {
        return;
    }
    const auto container = find_container(pod, container_name, or_first);
    if (!container) {
        return;
    }
    const std::string args_path =
        "/spec/" + container->list + "/" + std::to_string(container->index) + "/args";
    std::vector<std::string> args;
    const json::array* existing = array_at(container->container, "args");
    for (std::size_t i = 0; existing != nullptr && i < existing->size(); ++i) {
        args.push_back((*existing)[i].is_string() ? std::string((*existing)[i].get_string())
                                                  : std::string());
    }
    bool args_exist = existing != nullptr;
    for (const FlagToEnsure* flag : mine) {
        ensure_flag(*flag, args_path, args, args_exist, patch);
    }
}

}  // namespace

std::string escape_pointer_token(std::string_view token) {
    std::string out;
    for (const char c : token) {
        if (c == '~') {
            out += "~0";
        } else if (c == '/') {
            out += "~1";
        } else {
            out += c;
        }
    }
    return out;
}

std::optional<PodIdentity> identify_pod(const json::value& pod) {
    const json::object* metadata = object_at(pod, "metadata");
    const json::value* labels_value =
        metadata != nullptr ? metadata->if_contains("labels") : nullptr;
    const json::object* labels = labels_value != nullptr ? labels_value->if_object() : nullptr;
    if (labels == nullptr) {
        return std::nullopt;
    }
    PodIdentity identity;
    const auto instance = label(labels, "app.kubernetes.io/instance");
    if (const auto router = label(labels, "modeldeployment.gpustack.ai/router")) {
        identity.kind = PodIdentity::Kind::router;
        identity.deployment = instance && !instance->empty() ? *instance : *router;
        return identity.deployment.empty() ? std::nullopt : std::optional<PodIdentity>(identity);
    }
    if (label(labels, "app.kubernetes.io/name") != "model-deployment" || !instance) {
        return std::nullopt;
    }
    identity.deployment = *instance;
    identity.role = label(labels, "app.kubernetes.io/component").value_or("");
    identity.member_index =
        parse_integer(label(labels, "modeldeployment.gpustack.ai/member-index").value_or("0"))
            .value_or(0);
    return identity;
}

json::array mutate_pod(const json::value& pod, const PodIdentity& identity,
                       const json::value& model_deployment, const RuleData& data,
                       const InstanceTypes* instance_types, const ContainerNames& containers) {
    const Decoded decoded = decode_model_deployment(model_deployment);
    return pod_patch(pod, identity, plan_mutations(decoded.model, data, instance_types),
                     containers);
}

json::array pod_patch(const json::value& pod, const PodIdentity& identity, const Plan& plan,
                      const ContainerNames& containers) {
    json::array patch;
    if (identity.kind == PodIdentity::Kind::router) {
        ensure_flags(pod, plan.router_flags, FlagTarget::router, containers.router, patch);
        return patch;
    }
    const RolePlan* role = plan.role(identity.role);
    if (role == nullptr) {
        return patch;
    }
    const bool candidate =
        identity.member_index >= 0 &&
        static_cast<std::size_t>(identity.member_index) < role->candidate.size() &&
        role->candidate[static_cast<std::size_t>(identity.member_index)];
    const json::object* metadata = object_at(pod, "metadata");
    const json::value* labels_value =
        metadata != nullptr ? metadata->if_contains("labels") : nullptr;
    const json::object* labels = labels_value != nullptr ? labels_value->if_object() : nullptr;
    const auto current = label(labels, candidate_label);
    const std::string label_path = "/metadata/labels/" + escape_pointer_token(candidate_label);
    if (candidate && current != "true") {
        if (labels == nullptr) {
            json::object add = op("add", "/metadata/labels");
            add["value"] = json::object{{candidate_label, "true"}};
            patch.push_back(std::move(add));
        } else {
            json::object add = op("add", label_path);
            add["value"] = "true";
            patch.push_back(std::move(add));
        }
    } else if (!candidate && labels != nullptr && labels->contains(candidate_label)) {
        patch.push_back(op("remove", label_path));
    }
    ensure_flags(pod, role->flags, FlagTarget::engine, containers.engine, patch);
    ensure_flags(pod, role->flags, FlagTarget::routing_sidecar, containers.routing_sidecar, patch);
    return patch;
}

}  // namespace mdadmit::rules
