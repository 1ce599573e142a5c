#pragma once

#include <cstdint>
#include <memory_resource>
#include <string_view>

#include "mdadmit/rules/arg_stream.hpp"
#include "mdadmit/rules/instance_type.hpp"
#include "mdadmit/rules/model.hpp"
#include "mdadmit/rules/platform.hpp"
#include "mdadmit/rules/rule_data.hpp"
#include "mdadmit/rules/serving_mode.hpp"

namespace mdadmit::rules {

// Where a role's serving port came from, for messages.
enum class PortSource { declared, flag, sidecar_default, engine_default };

struct RoleFacts {
    const Role* role = nullptr;
    // `command` when set (a take-over role), else `extraArgs`.
    const List<std::string_view>* arg_tokens = nullptr;
    ArgStream args;
    std::string_view args_field;  // "command" or "extraArgs", for field paths
    ServingMode mode = ServingMode::unknown;
    // SGLang attention data parallelism with more than one rank, in any role kind.
    bool sglang_dp_attention = false;
    // vLLM flags that wire one data-parallel rank per member (External DP), in any role kind.
    bool vllm_rank_per_member = false;
    // Under llm-d-router a managed vLLM Decode role is fronted by the decode sidecar.
    bool proxy_fronted_decoder = false;
    std::int64_t serving_port = 0;
    PortSource port_source = PortSource::engine_default;
    Platform platform = Platform::unknown;
    // The role's InstanceType, when the cluster's InstanceTypes are known and name it.
    const InstanceType* instance_type = nullptr;

    std::string path() const;                             // spec.roles[i]
    std::string arg_path(std::size_t token_index) const;  // spec.roles[i].extraArgs[j]
};

// Facts derived once per evaluation and shared by every rule.
struct DeploymentFacts {
    const ModelDeployment* model = nullptr;
    const RouterData* router = nullptr;  // null without a router or for an unknown name
    ArgStream router_args;               // spec.router.extraArgs
    List<RoleFacts> roles;
    bool has_prefill_decode_pair = false;
    // The platform lookup is skipped for an object being deleted.
    bool platforms_resolved = false;
    // The cluster's InstanceTypes are known (and the object is not being deleted): a role
    // naming a type that is not among them names a type that does not exist.
    bool instance_types_known = false;

    const RoleFacts* first_of_kind(RoleKind kind) const;
    const RoleFacts* role_named(std::string_view name) const;
};

// The facts refer into `model` and keep their lists in `memory`; both must outlive them.
DeploymentFacts derive_facts(const ModelDeployment& model, const RuleData& data,
                             const InstanceTypes* instance_types,
                             Memory memory = std::pmr::get_default_resource());

}  // namespace mdadmit::rules
