// Section 4 of the rules contract: the engine arguments the operator refuses.
#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <span>

#include "rule_context.hpp"

namespace mdadmit::rules {

namespace {

const std::string command_escape =
    "to pass it yourself, take the role over with `command` (the operator then renders nothing "
    "for it)";

bool owned_arg_applies(const OwnedArg& owned, const RuleContext& ctx, const RoleFacts& role) {
    if (owned.engine && *owned.engine != ctx.model.engine) {
        return false;
    }
    if (owned.kind && *owned.kind != role.role->kind) {
        return false;
    }
    switch (owned.when) {
        case OwnedWhen::always:
            return true;
        case OwnedWhen::encode_role:
            return ctx.facts.first_of_kind(RoleKind::encode) != nullptr;
        case OwnedWhen::kv_cache:
            return ctx.model.kv_cache.has_value();
    }
    return false;
}

void engine_owned_args(const RuleContext& ctx, FindingSink& sink) {
    const FlagSpelling spelling = ctx.data.spelling(ctx.model.engine);
    for (const auto& role : ctx.facts.roles) {
        if (role.role->takes_over()) {
            continue;
        }
        for (const auto& flag : role.args.flags()) {
            for (const auto& owned : ctx.data.owned_args) {
                if (!owned_arg_applies(owned, ctx, role) ||
                    !spells(flag.name, owned.flag, owned.shortest_prefix, spelling)) {
                    continue;
                }
                const std::string spelled =
                    flag.name == owned.flag
                        ? code(owned.flag)
                        : code(std::string(flag.name)) + " (read as " + code(owned.flag) + ")";
                sink.report("engine-owned-args", role.arg_path(flag.flag_index),
                            spelled + " is set by the operator on role " + code(role.role->name) +
                                ": " + owned.reason,
                            "remove it; " + command_escape);
                break;
            }
        }
    }
}

// A parallel degree flag and its aliases, per engine.
struct DegreeFlag {
    std::string_view label;  // for the width message
    std::array<std::string_view, 2> names;
    std::int64_t minimum = 1;
};

constexpr std::string_view tensor = "tensor";
constexpr std::string_view pipeline = "pipeline";
constexpr std::string_view context = "context";
constexpr std::string_view data = "data";
constexpr std::string_view data_local = "data-local";

const std::array vllm_degrees{
    DegreeFlag{tensor, {"--tensor-parallel-size", "-tp"}},
    DegreeFlag{pipeline, {"--pipeline-parallel-size", "-pp"}},
    DegreeFlag{context, {"--prefill-context-parallel-size", "-pcp"}},
    DegreeFlag{data, {"--data-parallel-size", "-dp"}},
    DegreeFlag{data_local, {"--data-parallel-size-local", "-dpl"}, 0},
};

const std::array sglang_degrees{
    DegreeFlag{tensor, {"--tensor-parallel-size", "--tp-size"}},
    DegreeFlag{pipeline, {"--pipeline-parallel-size", "--pp-size"}},
    DegreeFlag{data, {"--data-parallel-size", "--dp-size"}},
};

// Flags that spread one replica's width over several nodes: the per-member width is then the
// engine's business, not one member's accelerators.
constexpr std::array<std::string_view, 11> multi_node_flags{
    "--nnodes",
    "--node-rank",
    "--master-addr",
    "--master-port",
    "--headless",
    "--data-parallel-address",
    "-dpa",
    "--data-parallel-rpc-port",
    "-dpp",
    "--dist-init-addr",
    "--nccl-init-addr",
};

// Ray places data-parallel ranks and workers on any node of its cluster.
bool placed_by_ray(const ArgStream& args) {
    for (const auto names :
         {std::initializer_list<std::string_view>{"--data-parallel-backend", "-dpb"},
          std::initializer_list<std::string_view>{"--distributed-executor-backend"}}) {
        const FlagOccurrence* flag = args.last(names);
        if (flag != nullptr && flag->value == "ray") {
            return true;
        }
    }
    return false;
}

bool spreads_over_nodes(const ArgStream& args) {
    return placed_by_ray(args) ||
           std::any_of(args.flags().begin(), args.flags().end(), [](const FlagOccurrence& flag) {
               return std::find(multi_node_flags.begin(), multi_node_flags.end(), flag.key) !=
                      multi_node_flags.end();
           });
}

std::span<const DegreeFlag> degrees_of(EngineKind engine) {
    if (engine == EngineKind::vllm) {
        return vllm_degrees;
    }
    if (engine == EngineKind::sglang) {
        return sglang_degrees;
    }
    return {};
}

bool is_degree_flag(const DegreeFlag& degree, std::string_view name) {
    return std::find(degree.names.begin(), degree.names.end(), name) != degree.names.end();
}

// Reports every malformed occurrence (the engines' parsers reject each one) and returns the
// effective (last) value of each degree, or nothing when one is malformed.
std::optional<std::map<std::string_view, std::int64_t>> read_degrees(
    const RoleFacts& role, std::span<const DegreeFlag> degrees, FindingSink& sink) {
    std::map<std::string_view, std::int64_t> values;
    bool malformed = false;
    for (const auto& flag : role.args.flags()) {
        for (const auto& degree : degrees) {
            if (!is_degree_flag(degree, flag.key)) {
                continue;
            }
            const auto value = flag.value ? parse_integer(*flag.value) : std::nullopt;
            if (value && *value >= degree.minimum) {
                values[degree.label] = *value;
                continue;
            }
            malformed = true;
            const std::string written =
                flag.value ? " is " + code(std::string(*flag.value)) : " has no value";
            sink.report(
                "parallelism", role.arg_path(flag.value ? flag.value_index : flag.flag_index),
                code(std::string(flag.name)) + " on role " + code(role.role->name) + written +
                    "; it takes a whole number of at least " + std::to_string(degree.minimum),
                "give " + std::string(flag.name) + " a whole number, e.g. " +
                    std::string(flag.name) + "=2");
        }
    }
    if (malformed) {
        return std::nullopt;
    }
    return values;
}

bool has_slices(const Resources& resources) {
    return resources.sliced_memory_percentage || resources.sliced_cores_percentage ||
           (resources.partitioned_profile && !resources.partitioned_profile->empty());
}

void parallelism(const RuleContext& ctx, FindingSink& sink) {
    const auto degrees = degrees_of(ctx.model.engine);
    for (const auto& role : ctx.facts.roles) {
        const auto values = read_degrees(role, degrees, sink);
        const Resources& resources = role.role->resources;
        // Silent where one member's share is not a whole count of accelerators the operator
        // allocates to it: unset, zero, sliced, or spread over nodes.
        // An Elastic EP role's accelerators are elastic-ep's to judge.
        if (!values || role.mode == ServingMode::elastic_ep || !resources.accelerator ||
            *resources.accelerator <= 0 || has_slices(resources) || role.role->size > 1 ||
            spreads_over_nodes(role.args)) {
            continue;
        }
        const auto degree = [&](std::string_view label) {
            const auto it = values->find(label);
            return it == values->end() ? std::int64_t{1} : it->second;
        };
        std::vector<std::pair<std::string_view, std::int64_t>> factors{
            {tensor, degree(tensor)}, {pipeline, degree(pipeline)}};
        if (ctx.model.engine == EngineKind::vllm) {
            factors.emplace_back(context, degree(context));
            // One rank per member under External DP; the local size when it is given.
            if (values->count(data_local) != 0) {
                factors.emplace_back(data_local, degree(data_local));
            } else if (!role.vllm_rank_per_member) {
                factors.emplace_back(data, degree(data));
            }
        } else if (!role.args.has({"--enable-dp-attention"})) {
            factors.emplace_back(data, degree(data));
        }
        std::int64_t width = 1;
        std::vector<std::string> parts;
        for (const auto& [label, value] : factors) {
            if (__builtin_mul_overflow(width, value, &width)) {
                width = std::numeric_limits<std::int64_t>::max();
            }
            if (value != 1) {
                parts.push_back(std::string(label) + " " + std::to_string(value));
            }
        }
        if (width > *resources.accelerator) {
            sink.report("parallelism", role.path() + ".resources.accelerator",
                        "role " + code(role.role->name) + " runs " + std::to_string(width) +
                            " accelerators per member (" + join(parts, " x ", " x ") +
                            ") but resources.accelerator is " +
                            std::to_string(*resources.accelerator),
                        "set resources.accelerator to " + std::to_string(width) +
                            ", or lower the parallel sizes");
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
            sink.report("elastic-ep", role.path() + ".elasticEp",
                        who + " needs vLLM; spec.engine.name is " + code(ctx.model.engine_name),
                        "remove elasticEp, or serve with vLLM");
            continue;
        }
        if (ctx.facts.roles.size() != 1) {
            sink.report("elastic-ep", role.path() + ".elasticEp",
                        who + " must be the deployment's only role; it has " +
                            std::to_string(ctx.facts.roles.size()),
                        "deploy the Elastic EP role in its own ModelDeployment");
        }
        if (r.kind != RoleKind::server) {
            sink.report("elastic-ep", role.path() + ".kind",
                        who + " must be of kind Server, not " + std::string(to_string(r.kind)),
                        "set kind: Server, or remove elasticEp");
        }
        if (r.replicas != 1) {
            sink.report("elastic-ep", role.path() + ".replicas",
                        who + " runs one replica, not " + std::to_string(r.replicas),
                        "set replicas: 1 and grow elasticEp.width instead");
        }
        if (r.size != 1) {
            sink.report("elastic-ep", role.path() + ".size",
                        who + " runs one member per replica, not " + std::to_string(r.size),
                        "set size: 1; the operator adds the collective's members");
        }
        if (r.takes_over()) {
            sink.report("elastic-ep", role.path() + ".command",
                        who + " is managed by the operator and cannot set command",
                        "pass engine flags in extraArgs instead");
            continue;
        }
        if (has_slices(r.resources)) {
            sink.report("elastic-ep", role.path() + ".resources",
                        who + " uses whole accelerators, not slices or partitions",
                        "remove the slice percentages and the partition profile");
        }
        const std::int64_t tp = role.args.integer({"--tensor-parallel-size", "-tp"}).value_or(1);
        if (r.resources.accelerator && *r.resources.accelerator != tp) {
            sink.report("elastic-ep", role.path() + ".resources.accelerator",
                        who + " has resources.accelerator " +
                            std::to_string(*r.resources.accelerator) +
                            " but a tensor-parallel size of " + std::to_string(tp) +
                            "; each member holds exactly one tensor-parallel group",
                        "set resources.accelerator to " + std::to_string(tp));
        }
        const FlagSpelling spelling = ctx.data.spelling(ctx.model.engine);
        for (const auto& flag : role.args.flags()) {
            for (const auto& owned : ctx.data.elastic_ep_owned_flags) {
                if (spells(flag.name, owned, "", spelling)) {
                    sink.report("elastic-ep", role.arg_path(flag.flag_index),
                                code(std::string(flag.name)) + " on " + who +
                                    " is set by the operator, which wires the collective's "
                                    "data parallelism",
                                "remove it; the operator wires the collective, and "
                                "elasticEp.width sets its data-parallel size");
                    break;
                }
            }
        }
        const auto max_width = role.args.integer({"--elastic-ep-max-dp-size"});
        if (r.elastic_ep_width && max_width && *r.elastic_ep_width > *max_width) {
            sink.report("elastic-ep", role.path() + ".elasticEp.width",
                        who + " has width " + std::to_string(*r.elastic_ep_width) +
                            ", above its --elastic-ep-max-dp-size " + std::to_string(*max_width),
                        "lower elasticEp.width, or raise --elastic-ep-max-dp-size");
        }
    }
}

constexpr std::array definitions{
    RuleDefinition{"engine-owned-args", engine_owned_args},
    RuleDefinition{"parallelism", parallelism},
    RuleDefinition{"elastic-ep", elastic_ep},
};

}  // namespace

std::span<const RuleDefinition> engine_arg_rules() {
    return definitions;
}

}  // namespace mdadmit::rules
