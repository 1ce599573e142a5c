// Section 4 of the rules contract: the engine arguments the operator refuses.
#include <algorithm>
#include <array>
#include <span>

#include "parallel_degrees.hpp"
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
    if (!owned.setting.empty() && !ctx.data.settings.named(owned.setting).value_or(false)) {
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
                sink.report(RuleId::engine_owned_args, role.arg_path(flag.flag_index),
                            spelled + " is set by the operator on role " + code(role.role->name) +
                                ": " + owned.reason,
                            "remove it; " + command_escape);
                break;
            }
        }
    }
}

void parallelism(const RuleContext& ctx, FindingSink& sink) {
    const ParallelTable* table = ctx.data.parallel_table(ctx.model.engine);
    if (table == nullptr) {
        return;
    }
    const FlagSpelling spelling = ctx.data.spelling(ctx.model.engine);
    for (const auto& role : ctx.facts.roles) {
        const DeclaredParallelism declared = read_parallelism(*table, role.args, role.args_field,
                                                              role.role->env, spelling, ctx.memory);
        for (const auto& problem : declared.problems) {
            sink.report(RuleId::parallelism, role.path() + "." + problem.field,
                        code(problem.written) + " on role " + code(role.role->name) +
                            (problem.value ? " is " + code(*problem.value) : " has no value") +
                            "; it takes a whole number of at least " +
                            std::to_string(problem.minimum),
                        "give " + problem.written + " a whole number, e.g. " + problem.written +
                            (problem.field.starts_with("env") ? "=2" : " 2"));
        }
        const Resources& resources = role.role->resources;
        const auto cards =
            resources.accelerator ? resources.accelerator->whole_count() : std::nullopt;
        // Silent where one member's share is not a whole count of accelerators: unset, zero,
        // fractional, sliced; where flags wire ranks over nodes or Pods, the width is not one
        // member's; an Elastic EP role's accelerators are elastic-ep's to judge.
        if (!declared.problems.empty() || declared.wired || !cards || *cards <= 0 ||
            resources.sliced() || resources.partitioned() || role.mode == ServingMode::elastic_ep) {
            continue;
        }
        const MemberWidth width = member_width(*table, declared, ctx.memory);
        if (width.accelerators <= *cards) {
            continue;
        }
        std::string message = "role " + code(role.role->name) + " runs " +
                              std::to_string(width.accelerators) + " accelerators per member (" +
                              width.factors_text() + ") but resources.accelerator is " +
                              resources.accelerator->text();
        if (role.role->size > 1) {
            message += "; size " + std::to_string(role.role->size) +
                       " does not help, the width is per member";
        }
        sink.report(RuleId::parallelism, role.path() + ".resources.accelerator", std::move(message),
                    "set resources.accelerator to " + std::to_string(width.accelerators) +
                        ", or lower the parallel sizes");
    }
}

constexpr std::array definitions{
    RuleDefinition{RuleId::engine_owned_args, engine_owned_args},
    RuleDefinition{RuleId::parallelism, parallelism},
};

}  // namespace

std::span<const RuleDefinition> engine_arg_rules() {
    return definitions;
}

}  // namespace mdadmit::rules
