// The Elastic EP profile (spec.roles[].elasticEp): its shape, and what an update may change.
#include <algorithm>
#include <array>

#include "parallel_degrees.hpp"
#include "rule_context.hpp"

namespace mdadmit::rules {

namespace {

constexpr std::string_view max_dp_degree = "elastic-ep-max-dp";

// The parallel degrees of an elastic role, read as vLLM reads them from its extraArgs (an
// elastic role never takes `command`).
DeclaredParallelism elastic_parallelism(const RuleContext& ctx, const Role& role) {
    const ParallelTable* table = ctx.data.parallel_table(EngineKind::vllm);
    if (table == nullptr) {
        return {};
    }
    const FlagSpelling spelling = ctx.data.spelling(EngineKind::vllm);
    return read_parallelism(*table, ArgStream(role.extra_args, spelling.underscores, ctx.memory),
                            "extraArgs", role.env, spelling, ctx.memory);
}

std::int64_t max_data_parallel(const DeclaredParallelism& declared) {
    return declared.declared(max_dp_degree) ? declared.value(max_dp_degree) : 0;
}

void elastic_shape(const RuleContext& ctx, const RoleFacts& role, const std::string& who,
                   FindingSink& sink) {
    const Role& r = *role.role;
    if (ctx.facts.roles.size() != 1) {
        sink.report(RuleId::elastic_ep, role.path() + ".elasticEp",
                    who + " must be the deployment's only role; it has " +
                        std::to_string(ctx.facts.roles.size()),
                    "deploy the Elastic EP role in its own ModelDeployment");
    }
    if (r.kind != RoleKind::server) {
        sink.report(RuleId::elastic_ep, role.path() + ".kind",
                    who + " must be of kind Server, not " + std::string(to_string(r.kind)),
                    "set kind: Server, or remove elasticEp");
    }
    if (r.replicas != 1) {
        sink.report(RuleId::elastic_ep, role.path() + ".replicas",
                    who + " runs one replica, not " + std::to_string(r.replicas),
                    "set replicas: 1 and grow elasticEp.width instead");
    }
    if (r.size != 1) {
        sink.report(RuleId::elastic_ep, role.path() + ".size",
                    who + " runs one member per replica, not " + std::to_string(r.size),
                    "set size: 1; the operator adds the collective's members");
    }
    // A width out of its range is the structural check's, as the CRD bounds it (2 to 64).
    if (!r.elastic_ep_width) {
        sink.report(RuleId::elastic_ep, role.path() + ".elasticEp.width",
                    who + " names no width: the number of engines in the collective",
                    "set elasticEp.width from 2 to 64, the master included");
    }
}

void elastic_resources(const RoleFacts& role, const std::string& who, std::int64_t tp,
                       FindingSink& sink) {
    const Resources& resources = role.role->resources;
    if (resources.sliced() || resources.partitioned()) {
        sink.report(RuleId::elastic_ep, role.path() + ".resources",
                    who + " uses whole accelerators, not slices or partitions",
                    "remove the slice percentages and the partition profile");
    }
    if (resources.interface_count && !resources.interface_count->is_zero()) {
        sink.report(RuleId::elastic_ep, role.path() + ".resources.interface",
                    who + " requests " + resources.interface_count->text() +
                        " fabric interfaces; the elastic profile takes none",
                    "remove resources.interface");
    }
    if (resources.accelerator && resources.accelerator->whole_count() != tp) {
        sink.report(RuleId::elastic_ep, role.path() + ".resources.accelerator",
                    who + " has resources.accelerator " + resources.accelerator->text() +
                        " but a tensor-parallel size of " + std::to_string(tp) +
                        "; each member holds exactly one tensor-parallel group",
                    "set resources.accelerator to " + std::to_string(tp));
    }
}

void elastic_owned(const RuleContext& ctx, const RoleFacts& role, const std::string& who,
                   FindingSink& sink) {
    const FlagSpelling spelling = ctx.data.spelling(ctx.model.engine);
    for (const auto& flag : role.args.flags()) {
        for (const auto& owned : ctx.data.elastic_ep_owned_flags) {
            if (spells(flag.name, owned, "", spelling)) {
                sink.report(RuleId::elastic_ep, role.arg_path(flag.flag_index),
                            code(std::string(flag.name)) + " on " + who +
                                " is set by the operator, which wires the collective's "
                                "data parallelism",
                            "remove it; the operator wires the collective, and "
                            "elasticEp.width sets its data-parallel size");
                break;
            }
        }
    }
    const auto& env = role.role->env;
    for (std::size_t k = 0; k < env.size(); ++k) {
        const auto& owned = ctx.data.elastic_ep_owned_env;
        if (std::find(owned.begin(), owned.end(), env[k].name) != owned.end()) {
            sink.report(RuleId::elastic_ep, role.path() + ".env[" + std::to_string(k) + "]",
                        code(env[k].name) + " on " + who +
                            " is set by the operator, which wires the collective",
                        "remove it from spec.roles[" + std::to_string(role.role->index) + "].env");
        }
    }
}

void elastic_ep(const RuleContext& ctx, FindingSink& sink) {
    for (const auto& role : ctx.facts.roles) {
        const Role& r = *role.role;
        if (!r.has_elastic_ep) {
            continue;
        }
        const std::string who = "Elastic EP role " + code(r.name);
        if (ctx.model.engine != EngineKind::vllm) {
            sink.report(RuleId::elastic_ep, role.path() + ".elasticEp",
                        who + " needs vLLM; spec.engine.name is " + code(ctx.model.engine_name),
                        "remove elasticEp, or serve with vLLM");
            continue;
        }
        elastic_shape(ctx, role, who, sink);
        if (r.takes_over()) {
            sink.report(RuleId::elastic_ep, role.path() + ".command",
                        who + " is managed by the operator and cannot set command",
                        "pass engine flags in extraArgs instead");
            continue;
        }
        elastic_owned(ctx, role, who, sink);
        const DeclaredParallelism declared = elastic_parallelism(ctx, r);
        if (!declared.problems.empty()) {
            continue;  // parallelism reports the malformed degree
        }
        if (declared.value("pipeline") != 1 || declared.value("prefill-context") != 1) {
            sink.report(RuleId::elastic_ep, role.path() + ".extraArgs",
                        who +
                            " holds one tensor-parallel group per member; its pipeline and "
                            "prefill-context parallel sizes must be 1",
                        "remove --pipeline-parallel-size and --prefill-context-parallel-size");
        }
        elastic_resources(role, who, declared.value("tensor"), sink);
        const std::int64_t max_dp = max_data_parallel(declared);
        if (r.elastic_ep_width && max_dp > 0 && *r.elastic_ep_width > max_dp) {
            sink.report(RuleId::elastic_ep, role.path() + ".elasticEp.width",
                        who + " has width " + std::to_string(*r.elastic_ep_width) +
                            ", above its --elastic-ep-max-dp-size " + std::to_string(max_dp),
                        "lower elasticEp.width, or raise --elastic-ep-max-dp-size");
        }
    }
}

bool same_resources(const Resources& a, const Resources& b) {
    return a.present == b.present && same_quantity(a.accelerator, b.accelerator) &&
           a.sliced_memory_percentage.value_or(0) == b.sliced_memory_percentage.value_or(0) &&
           a.sliced_cores_percentage.value_or(0) == b.sliced_cores_percentage.value_or(0) &&
           a.partitioned_profile.value_or("") == b.partitioned_profile.value_or("") &&
           same_quantity(a.interface_count, b.interface_count);
}

// What the collective was admitted with stays: its tensor-parallel size, its maximum data
// parallel size, its pool and its accelerators.
void elastic_frozen(const RuleContext& ctx, const Role& role, const Role& before,
                    FindingSink& sink) {
    const std::string path = "spec.roles[" + std::to_string(role.index) + "]";
    const DeclaredParallelism now = elastic_parallelism(ctx, role);
    const DeclaredParallelism then = elastic_parallelism(ctx, before);
    if (now.problems.empty() && then.problems.empty()) {
        if (now.value("tensor") != then.value("tensor")) {
            sink.report(RuleId::elastic_ep_update, path + ".extraArgs",
                        "the tensor-parallel size of Elastic EP role " + code(role.name) +
                            " cannot change from " + std::to_string(then.value("tensor")) + " to " +
                            std::to_string(now.value("tensor")),
                        "keep --tensor-parallel-size " + std::to_string(then.value("tensor")));
        }
        if (max_data_parallel(now) != max_data_parallel(then)) {
            const auto shown = [](std::int64_t v) {
                return v == 0 ? std::string("unset") : std::to_string(v);
            };
            sink.report(RuleId::elastic_ep_update, path + ".extraArgs",
                        "--elastic-ep-max-dp-size of Elastic EP role " + code(role.name) +
                            " is fixed at creation (was " + shown(max_data_parallel(then)) +
                            ", now " + shown(max_data_parallel(now)) + ")",
                        "restore it as it was");
        }
    }
    if (role.instance_type.value_or("") != before.instance_type.value_or("")) {
        sink.report(RuleId::elastic_ep_update, path + ".instanceType",
                    "the instanceType of Elastic EP role " + code(role.name) +
                        " cannot change: its members were admitted against " +
                        code(before.instance_type.value_or("")),
                    "restore it, or create a new ModelDeployment");
    }
    if (!same_resources(role.resources, before.resources)) {
        sink.report(
            RuleId::elastic_ep_update, path + ".resources",
            "the resources of Elastic EP role " + code(role.name) + " cannot change after creation",
            "restore them as they were, or create a new ModelDeployment");
    }
}

const Role* elastic_role(const ModelDeployment& model) {
    for (const auto& role : model.roles) {
        if (role.has_elastic_ep) {
            return &role;
        }
    }
    return nullptr;
}

void elastic_ep_update(const RuleContext& ctx, FindingSink& sink) {
    if (ctx.old_model == nullptr) {
        return;
    }
    const Role* old_elastic = elastic_role(*ctx.old_model);
    for (const auto& role : ctx.model.roles) {
        const std::string path = "spec.roles[" + std::to_string(role.index) + "]";
        const RoleFacts* stored = ctx.stored(role.name);
        if (stored == nullptr) {
            if (role.has_elastic_ep && old_elastic != nullptr) {
                sink.report(RuleId::elastic_ep_update, path + ".name",
                            "elasticEp must stay on role " + code(old_elastic->name) +
                                ", the role it was created with",
                            "keep the role " + code(old_elastic->name));
            }
            continue;
        }
        const Role& before = *stored->role;
        if (before.has_elastic_ep != role.has_elastic_ep) {
            sink.report(RuleId::elastic_ep_update, path + ".elasticEp",
                        "elasticEp cannot be " +
                            std::string(role.has_elastic_ep ? "added to" : "removed from") +
                            " role " + code(role.name) + " after creation",
                        "restore it as it was, or create a new ModelDeployment");
            continue;
        }
        if (!role.has_elastic_ep) {
            continue;
        }
        if (before.elastic_ep_width &&
            (!role.elastic_ep_width || *role.elastic_ep_width < *before.elastic_ep_width)) {
            sink.report(
                RuleId::elastic_ep_update, path + ".elasticEp.width",
                "elasticEp.width of role " + code(role.name) + " cannot shrink from " +
                    std::to_string(*before.elastic_ep_width) +
                    (role.elastic_ep_width ? " to " + std::to_string(*role.elastic_ep_width)
                                           : std::string(" to unset")),
                "keep the width at " + std::to_string(*before.elastic_ep_width) + " or grow it");
        }
        elastic_frozen(ctx, role, before, sink);
    }
}

constexpr std::array definitions{
    RuleDefinition{RuleId::elastic_ep, elastic_ep},
    RuleDefinition{RuleId::elastic_ep_update, elastic_ep_update},
};

}  // namespace

std::span<const RuleDefinition> elastic_ep_rules() {
    return definitions;
}

}  // namespace mdadmit::rules
