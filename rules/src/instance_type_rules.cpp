// What a role asks of its InstanceType's pool: the type exists, the accelerators fit, the
// slicing or partition it asks for is offered, and fabric interfaces have a leg to use them.
// Judged only when the cluster's InstanceTypes are known and the object is not being deleted.
#include <algorithm>
#include <array>

#include "rule_context.hpp"
#include "text_syntax.hpp"

namespace mdadmit::rules {

namespace {

std::string resources_path(const RoleFacts& role) {
    return role.path() + ".resources";
}

// The role's InstanceType when it accelerates and the role states resources: what the
// operator's pool rules judge.
const InstanceType* acceleratable_type(const RoleFacts& role) {
    return role.instance_type != nullptr && role.instance_type->acceleratable &&
                   role.role->resources.present
               ? role.instance_type
               : nullptr;
}

void instance_type_exists(const RuleContext& ctx, FindingSink& sink) {
    if (!ctx.facts.instance_types_known) {
        return;
    }
    for (const auto& role : ctx.facts.roles) {
        const auto& name = role.role->instance_type;
        if (name && !name->empty() && role.instance_type == nullptr) {
            sink.report(RuleId::instance_type_exists, role.path() + ".instanceType",
                        "InstanceType " + code(*name) + " of role " + code(role.role->name) +
                            " does not exist",
                        "name an InstanceType of the cluster (kubectl get instancetypes)");
        }
    }
}

void instance_type_capacity(const RuleContext& ctx, FindingSink& sink) {
    const auto roles_on = [&ctx](std::string_view type_name) {
        return std::count_if(ctx.facts.roles.begin(), ctx.facts.roles.end(),
                             [&](const auto& r) { return r.role->instance_type == type_name; });
    };
    for (const auto& role : ctx.facts.roles) {
        const InstanceType* type = acceleratable_type(role);
        const Resources& resources = role.role->resources;
        if (type == nullptr || !resources.accelerator) {
            continue;
        }
        const Quantity& asked = *resources.accelerator;
        const std::string_view type_name = *role.role->instance_type;
        if (asked.is_zero() && roles_on(type_name) > 1) {
            sink.report(RuleId::instance_type_capacity, resources_path(role) + ".accelerator",
                        "role " + code(role.role->name) + " asks for 0 accelerators on " +
                            code(type_name) +
                            ", an acceleratable type its queue counts only in accelerators",
                        "request at least one accelerator, or use a non-acceleratable type");
            continue;
        }
        // The pool's capacity is known once the operator has computed the type's status.
        if (resources.sliced() || resources.partitioned() || !type->capacity ||
            asked.compare(*type->capacity) <= 0) {
            continue;
        }
        sink.report(
            RuleId::instance_type_capacity, resources_path(role) + ".accelerator",
            "role " + code(role.role->name) + " asks for " + asked.text() +
                " whole accelerators; InstanceType " + code(type_name) + " has " +
                type->capacity->text() + " in its pool",
            "ask for at most " + type->capacity->text() + ", or choose a larger InstanceType");
    }
}

void exactly_one(const RoleFacts& role, std::string_view request, FindingSink& sink) {
    const auto& asked = role.role->resources.accelerator;
    if (asked && asked->whole_count() == 1) {
        return;
    }
    sink.report(RuleId::instance_type_slicing, resources_path(role) + ".accelerator",
                "role " + code(role.role->name) + " asks for " +
                    (asked ? asked->text() : std::string("no")) + " accelerators; a " +
                    std::string(request) + " request takes exactly 1",
                "set resources.accelerator to 1");
}

void instance_type_slicing(const RuleContext& ctx, FindingSink& sink) {
    for (const auto& role : ctx.facts.roles) {
        const InstanceType* type = acceleratable_type(role);
        const Resources& resources = role.role->resources;
        // Until the operator has computed the pool's detail it refuses slices for a moment
        // ("not ready yet; retry"); that is not the object's fault, so nothing is said.
        if (type == nullptr || !type->detail_ready() ||
            (!resources.partitioned() && !resources.sliced())) {
            continue;
        }
        const std::string_view type_name = *role.role->instance_type;
        if (resources.partitioned()) {
            const std::string path = resources_path(role) + ".acceleratorPartitionedProfile";
            if (!type->partitioning) {
                sink.report(RuleId::instance_type_slicing, path,
                            "InstanceType " + code(type_name) + " of role " +
                                code(role.role->name) + " offers no hardware partitions",
                            "use whole accelerators, or an InstanceType that partitions them");
            } else if (!type->offers_profile(*resources.partitioned_profile)) {
                sink.report(RuleId::instance_type_slicing, path,
                            "InstanceType " + code(type_name) + " offers no partition profile " +
                                code(*resources.partitioned_profile),
                            "use one of: " + join(type->partition_profiles, ", ", ", "));
            }
            exactly_one(role, "partitioned", sink);
            continue;
        }
        if (!type->logical_slicing) {
            sink.report(RuleId::instance_type_slicing,
                        resources_path(role) + ".acceleratorSlicedMemoryPercentage",
                        "InstanceType " + code(type_name) + " of role " + code(role.role->name) +
                            " offers no logical slicing",
                        "use whole accelerators, or an InstanceType that slices them");
        }
        exactly_one(role, "sliced", sink);
    }
}

// A Prefill and a Decode role slicing cards of one accelerator group can land on one card,
// where the KV transfer between them has nowhere to go.
void pd_slice_group(const RuleContext& ctx, FindingSink& sink) {
    const auto sliced_of = [&](RoleKind kind) {
        std::vector<const RoleFacts*> out;
        for (const auto& role : ctx.facts.roles) {
            if (role.role->kind == kind && role.role->resources.sliced() &&
                role.instance_type != nullptr && !role.instance_type->accelerator_group.empty()) {
                out.push_back(&role);
            }
        }
        return out;
    };
    for (const RoleFacts* prefill : sliced_of(RoleKind::prefill)) {
        for (const RoleFacts* decode : sliced_of(RoleKind::decode)) {
            const std::string& group = prefill->instance_type->accelerator_group;
            if (group != decode->instance_type->accelerator_group) {
                continue;
            }
            sink.report(RuleId::pd_slice_group, "spec.roles",
                        "roles " + code(prefill->role->name) + " and " + code(decode->role->name) +
                            " both take logical slices from accelerator group " + code(group) +
                            "; both halves could land on one card",
                        "give one of them whole accelerators, or an InstanceType of another "
                        "accelerator group");
        }
    }
}

// The protocol of the direct KV transfer leg the operator renders for a role: vLLM Prefill
// and Decode roles of a pair behind a router, on a known non-Ascend platform; "" when there is
// none, nullopt when it depends on an InstanceType that is not known.
std::optional<std::string> direct_protocol(const ModelDeployment& model,
                                           const DeploymentFacts& facts, const RoleFacts& role) {
    const RoleKind kind = role.role->kind;
    if (role.role->takes_over() || model.engine != EngineKind::vllm || !model.router ||
        !facts.has_prefill_decode_pair || (kind != RoleKind::prefill && kind != RoleKind::decode)) {
        return "";
    }
    if (role.instance_type == nullptr) {
        return std::nullopt;
    }
    if (!role.instance_type->detail_ready() || role.platform == Platform::ascend) {
        return "";
    }
    return lowercase(model.kv_transfer_protocol.value_or("tcp"));
}

// On an update the operator judges a role's interfaces again only when what they depend on
// moved.
bool interface_inputs_held(const RuleContext& ctx, const RoleFacts& role) {
    const RoleFacts* stored = ctx.stored(role.role->name);
    return stored != nullptr && stored->role->instance_type == role.role->instance_type &&
           stored->role->takes_over() == role.role->takes_over() &&
           same_quantity(stored->role->resources.interface_count,
                         role.role->resources.interface_count) &&
           direct_protocol(*ctx.old_model, *ctx.old_facts, *stored) ==
               direct_protocol(ctx.model, ctx.facts, role);
}

void interface_transport(const RuleContext& ctx, FindingSink& sink) {
    // With a KV cache pool the answer depends on the pool's members, which are not read.
    if (!ctx.facts.platforms_resolved || ctx.model.kv_cache) {
        return;
    }
    for (const auto& role : ctx.facts.roles) {
        const auto& count = role.role->resources.interface_count;
        if (!count || !count->whole() || count->compare(Quantity::of(0)) <= 0 ||
            interface_inputs_held(ctx, role)) {
            continue;
        }
        const auto protocol = direct_protocol(ctx.model, ctx.facts, role);
        if (!protocol || *protocol == "rdma" || *protocol == "efa") {
            continue;
        }
        sink.report(RuleId::interface_transport, resources_path(role) + ".interface",
                    "role " + code(role.role->name) + " requests " + count->text() +
                        " fabric interfaces but has no RDMA or EFA transfer leg to use them" +
                        (protocol->empty() ? std::string() : " (kvTransfer: " + *protocol + ")"),
                    "remove resources.interface, or set spec.kvTransfer.protocol to RDMA or EFA "
                    "on a vLLM Prefill+Decode pair");
    }
}

constexpr std::array definitions{
    RuleDefinition{RuleId::instance_type_exists, instance_type_exists},
    RuleDefinition{RuleId::instance_type_capacity, instance_type_capacity},
    RuleDefinition{RuleId::instance_type_slicing, instance_type_slicing},
    RuleDefinition{RuleId::pd_slice_group, pd_slice_group},
    RuleDefinition{RuleId::interface_transport, interface_transport},
};

}  // namespace

std::span<const RuleDefinition> instance_type_rules() {
    return definitions;
}

}  // namespace mdadmit::rules
