// Section 3 of the rules contract: the one port every routed role serves on.
#include <algorithm>
#include <array>

#include "rule_context.hpp"

namespace mdadmit::rules {

namespace {

void port_uniformity(const RuleContext& ctx, FindingSink& sink) {
    if (!ctx.model.router) {
        return;
    }
    const auto& roles = ctx.facts.roles;
    const bool one_port = std::all_of(roles.begin(), roles.end(), [&](const RoleFacts& role) {
        return role.serving_port == roles.front().serving_port;
    });
    if (!one_port) {
        std::vector<std::string> listing;
        for (const auto& role : roles) {
            listing.push_back(std::string(role.role->name) + " " +
                              std::to_string(role.serving_port));
        }
        sink.report(RuleId::port_uniformity, "spec.router",
                    "routed roles serve on different ports: " + join(listing, ", ", ", "),
                    "give every role the same serving port (ports[0].port, else --port, else " +
                        std::to_string(ctx.data.default_serving_port) + ")");
    }
    for (const auto& role : ctx.facts.roles) {
        if (!role.role->ports.empty() && role.role->ports.front().protocol != "TCP") {
            sink.report(RuleId::port_uniformity, role.path() + ".ports[0].protocol",
                        "serving port of role " + code(role.role->name) + " uses " +
                            std::string(role.role->ports.front().protocol) +
                            "; routed roles serve over TCP",
                        "set protocol: TCP or remove it");
        }
        for (const auto& flag : role.args.flags()) {
            const auto& ssl = ctx.data.ssl_flags;
            if (std::any_of(ssl.begin(), ssl.end(),
                            [&](const std::string& spelled) { return flag.reads_as(spelled); })) {
                sink.report(RuleId::port_uniformity, role.arg_path(flag.flag_index),
                            "role " + code(role.role->name) + " passes " + code(flag.name) +
                                "; routed roles serve plain HTTP",
                            "remove it; the router speaks plain HTTP to the roles");
            }
        }
    }
}

void multiport_refused(const RuleContext& ctx, FindingSink& sink) {
    const ParallelTable* table = ctx.data.parallel_table(ctx.model.engine);
    if (table == nullptr) {
        return;
    }
    for (const auto& role : ctx.facts.roles) {
        if (role.role->takes_over()) {
            continue;
        }
        std::vector<const FlagOccurrence*> present;
        for (const auto& shape : table->balance_shapes) {
            if (const FlagOccurrence* flag = role.args.last_of(shape)) {
                present.push_back(flag);
            }
        }
        if (const FlagOccurrence* multiport = role.args.last_of(table->multi_port_flags)) {
            sink.report(RuleId::multiport_refused, role.arg_path(multiport->flag_index),
                        code(multiport->name) +
                            " starts vLLM's MultiPort mode, which serves on "
                            "extra, incremented ports",
                        "use --data-parallel-external-lb with one rank per member instead");
        }
        if (present.size() > 1) {
            std::sort(present.begin(), present.end(),
                      [](const auto* a, const auto* b) { return a->flag_index < b->flag_index; });
            sink.report(RuleId::multiport_refused, role.arg_path(present.back()->flag_index),
                        code(present.back()->name) + " and " + code(present.front()->name) +
                            " derive different data-parallel load-balancing shapes",
                        "keep one of them");
        }
    }
}

void decoder_proxy_port(const RuleContext& ctx, FindingSink& sink) {
    for (const auto& role : ctx.facts.roles) {
        if (!role.proxy_fronted_decoder) {
            continue;
        }
        const FlagOccurrence* flag = role.args.last({"--port"});
        if (flag == nullptr || role.args.integer({"--port"}) != role.serving_port) {
            continue;
        }
        sink.report(RuleId::decoder_proxy_port, role.arg_path(flag->value_index),
                    "--port " + std::to_string(role.serving_port) + " on Decode role " +
                        code(role.role->name) +
                        " is the port its decode sidecar publishes; vLLM listens behind it",
                    "remove --port (vLLM then listens on " +
                        std::to_string(ctx.data.decoder_backend_port) + ") or choose another port");
    }
}

// The operator leaves a stored role's --port alone while its ports and its arguments stay as
// they were.
bool port_declaration_held(const RuleContext& ctx, const RoleFacts& role) {
    const RoleFacts* stored = ctx.stored(role.role->name);
    return stored != nullptr && stored->role->ports == role.role->ports &&
           stored->role->takes_over() == role.role->takes_over() &&
           *stored->arg_tokens == *role.arg_tokens;
}

void declared_port_mismatch(const RuleContext& ctx, FindingSink& sink) {
    for (const auto& role : ctx.facts.roles) {
        if (role.proxy_fronted_decoder || role.role->ports.empty() ||
            !role.role->ports.front().port || port_declaration_held(ctx, role)) {
            continue;
        }
        const FlagOccurrence* flag = role.args.last({"--port"});
        const auto passed = role.args.integer({"--port"});
        const std::int64_t declared = *role.role->ports.front().port;
        if (flag == nullptr || !passed || *passed == declared) {
            continue;
        }
        sink.report(RuleId::declared_port_mismatch, role.arg_path(flag->value_index),
                    "--port " + std::to_string(*passed) + " differs from the port role " +
                        code(role.role->name) + " declares (" + std::to_string(declared) + ")",
                    "make ports[0].port and --port the same, or drop --port");
    }
}

bool reserved_applies(const ReservedPorts& entry, const ModelDeployment& model,
                      const DeploymentFacts& facts, const RoleFacts& role) {
    if (entry.engine != model.engine || role.role->takes_over() ||
        std::find(entry.kinds.begin(), entry.kinds.end(), role.role->kind) == entry.kinds.end()) {
        return false;
    }
    if (entry.router && (!model.router || model.router->name != *entry.router)) {
        return false;
    }
    switch (entry.when) {
        case ReservedWhen::always:
            return true;
        case ReservedWhen::pd_pair_with_router:
            return facts.has_prefill_decode_pair && model.router.has_value();
        case ReservedWhen::pd_pair_with_router_or_kv_cache:
            return facts.has_prefill_decode_pair &&
                   (model.router.has_value() || model.kv_cache.has_value());
    }
    return false;
}

// The entry that reserves `port` on this role of this deployment, if any.
const ReservedPorts* reserving(const RuleData& data, const ModelDeployment& model,
                               const DeploymentFacts& facts, const RoleFacts& role,
                               std::int64_t port) {
    for (const auto& entry : data.reserved_ports) {
        if (reserved_applies(entry, model, facts, role) &&
            std::find(entry.ports.begin(), entry.ports.end(), port) != entry.ports.end()) {
            return &entry;
        }
    }
    return nullptr;
}

// A --port that collided in the stored object, on the same role and the same port, is left
// alone, as the operator leaves it; a collision the update creates (adding a router) is not.
bool passed_collision_held(const RuleContext& ctx, const RoleFacts& role, std::int64_t port) {
    const RoleFacts* stored = ctx.stored(role.role->name);
    return stored != nullptr && stored->role->ports.empty() &&
           stored->args.integer({"--port"}) == port &&
           reserving(ctx.data, *ctx.old_model, *ctx.old_facts, *stored, port) != nullptr;
}

void reserved_port(const RuleContext& ctx, FindingSink& sink) {
    for (const auto& role : ctx.facts.roles) {
        const auto report = [&](const ReservedPorts& entry, std::string path, std::int64_t port) {
            sink.report(RuleId::reserved_port, std::move(path),
                        "port " + std::to_string(port) + " is reserved on " +
                            std::string(to_string(role.role->kind)) + " role " +
                            code(role.role->name) + ": " + entry.reason,
                        "choose another port");
        };
        for (std::size_t k = 0; k < role.role->ports.size(); ++k) {
            const auto& port = role.role->ports[k].port;
            if (!port) {
                continue;
            }
            if (const auto* entry = reserving(ctx.data, ctx.model, ctx.facts, role, *port)) {
                report(*entry, role.path() + ".ports[" + std::to_string(k) + "]", *port);
            }
        }
        // A role that declares ports serves on them; its --port is declared-port-mismatch's.
        const FlagOccurrence* flag = role.args.last({"--port"});
        const auto passed = role.args.integer({"--port"});
        if (!role.role->ports.empty() || flag == nullptr || !passed) {
            continue;
        }
        if (const auto* entry = reserving(ctx.data, ctx.model, ctx.facts, role, *passed);
            entry != nullptr && !passed_collision_held(ctx, role, *passed)) {
            report(*entry, role.arg_path(flag->value_index), *passed);
        }
    }
}

constexpr std::array definitions{
    RuleDefinition{RuleId::port_uniformity, port_uniformity},
    RuleDefinition{RuleId::multiport_refused, multiport_refused},
    RuleDefinition{RuleId::decoder_proxy_port, decoder_proxy_port},
    RuleDefinition{RuleId::declared_port_mismatch, declared_port_mismatch},
    RuleDefinition{RuleId::reserved_port, reserved_port},
};

}  // namespace

std::span<const RuleDefinition> port_rules() {
    return definitions;
}

}  // namespace mdadmit::rules
