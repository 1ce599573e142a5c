// Section 5 of the rules contract: what an UPDATE may change, judged against oldObject.
#include <algorithm>
#include <array>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <map>
#include <set>

#include "mdadmit/rules/json_input.hpp"
#include "rule_context.hpp"

namespace mdadmit::rules {

namespace {

namespace json = boost::json;

bool same(const json::value* a, const json::value* b) {
    if (a == nullptr || b == nullptr) {
        return a == b;
    }
    return *a == *b;
}

// spec.model is frozen member by member, so the finding names the member that changed.
void immutable_model(const RuleContext& ctx, FindingSink& sink) {
    const json::value* now = at_pointer(ctx.object, "/spec/model");
    const json::value* before = at_pointer(*ctx.old_object, "/spec/model");
    if (same(now, before)) {
        return;
    }
    const auto members = [](const json::value* value) {
        std::map<std::string, const json::value*> out;
        if (value != nullptr && value->is_object()) {
            for (const auto& member : value->get_object()) {
                out[std::string(member.key())] = &member.value();
            }
        }
        return out;
    };
    const auto before_members = members(before);
    const auto now_members = members(now);
    std::set<std::string> keys;
    for (const auto* side : {&before_members, &now_members}) {
        for (const auto& entry : *side) {
            keys.insert(entry.first);
        }
    }
    const auto lookup = [](const auto& side, const std::string& key) -> const json::value* {
        const auto it = side.find(key);
        return it == side.end() ? nullptr : it->second;
    };
    for (const auto& key : keys) {
        const json::value* old_value = lookup(before_members, key);
        if (!same(lookup(now_members, key), old_value)) {
            sink.report(RuleId::immutable, "spec.model." + key,
                        "spec.model." + key + " cannot change after creation (was " +
                            (old_value == nullptr ? std::string("unset")
                                                  : code(json::serialize(*old_value))) +
                            ")",
                        "restore it, or create a new ModelDeployment for another model");
        }
    }
}

void immutable(const RuleContext& ctx, FindingSink& sink) {
    if (ctx.old_model == nullptr) {
        return;
    }
    const ModelDeployment& old_model = *ctx.old_model;
    immutable_model(ctx, sink);
    const bool engine_changed =
        ctx.model.engine != EngineKind::unknown && old_model.engine != EngineKind::unknown
            ? ctx.model.engine != old_model.engine
            : ctx.model.engine_name != old_model.engine_name;
    if (engine_changed) {
        sink.report(RuleId::immutable, "spec.engine.name",
                    "spec.engine.name cannot change from " + code(old_model.engine_name) + " to " +
                        code(ctx.model.engine_name),
                    "restore it, or create a new ModelDeployment for the other engine");
    }
    const json::value* kv_cache = at_pointer(ctx.object, "/spec/kvCache");
    const json::value* old_kv_cache = at_pointer(*ctx.old_object, "/spec/kvCache");
    if (!same(kv_cache, old_kv_cache)) {
        const std::string change = old_kv_cache == nullptr ? "added"
                                   : kv_cache == nullptr   ? "removed"
                                                           : "changed";
        sink.report(RuleId::immutable, "spec.kvCache",
                    "spec.kvCache cannot be " + change + " after creation (was " +
                        (old_kv_cache == nullptr ? std::string("unset")
                                                 : code(json::serialize(*old_kv_cache))) +
                        ")",
                    old_kv_cache == nullptr ? "remove spec.kvCache"
                                            : "restore spec.kvCache to its old value");
    }
    if (ctx.model.router && old_model.router && ctx.model.router->name != old_model.router->name) {
        sink.report(RuleId::immutable, "spec.router.name",
                    "spec.router.name cannot change in place from " + code(old_model.router->name) +
                        " to " + code(ctx.model.router->name),
                    "remove the router block in one update and add the new router in the next");
    }
    std::vector<std::string> added;
    for (const auto& role : ctx.model.roles) {
        const RoleFacts* stored = ctx.stored(role.name);
        const Role* before = stored != nullptr ? stored->role : nullptr;
        if (before == nullptr) {
            added.push_back(code(role.name));
        } else if (before->kind != role.kind && role.kind != RoleKind::unknown) {
            sink.report(RuleId::immutable, "spec.roles[" + std::to_string(role.index) + "].kind",
                        "role " + code(role.name) + " cannot change kind from " +
                            std::string(to_string(before->kind)) + " to " +
                            std::string(to_string(role.kind)),
                        "restore its kind; a new kind needs a new ModelDeployment");
        }
    }
    std::vector<std::string> removed;
    for (const auto& role : old_model.roles) {
        if (std::none_of(ctx.model.roles.begin(), ctx.model.roles.end(),
                         [&](const Role& now) { return now.name == role.name; })) {
            removed.push_back(code(role.name));
        }
    }
    if (!added.empty() || !removed.empty()) {
        std::string change;
        if (!added.empty()) {
            change += "adds " + join(added, ", ", " and ");
        }
        if (!removed.empty()) {
            change += std::string(change.empty() ? "" : " and ") + "removes " +
                      join(removed, ", ", " and ");
        }
        sink.report(RuleId::immutable, "spec.roles",
                    "the set of role names cannot change; this update " + change,
                    "keep the roles as they were; scale them with replicas");
    }
}

constexpr std::array definitions{
    RuleDefinition{RuleId::immutable, immutable},
};

}  // namespace

const RoleFacts* RuleContext::stored(std::string_view role_name) const {
    return old_facts == nullptr ? nullptr : old_facts->role_named(role_name);
}

bool spec_unchanged(const json::value& object, const json::value& old_object) {
    const json::value* spec = at_pointer(object, "/spec");
    return spec != nullptr && same(spec, at_pointer(old_object, "/spec"));
}

std::span<const RuleDefinition> update_rules() {
    return definitions;
}

}  // namespace mdadmit::rules
