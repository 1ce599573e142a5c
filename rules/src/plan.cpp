#include "mdadmit/rules/plan.hpp"

#include <algorithm>

namespace mdadmit::rules {

namespace {

std::vector<bool> candidates(CandidateRule rule, std::int64_t size) {
    std::vector<bool> out(static_cast<std::size_t>(std::clamp<std::int64_t>(size, 1, 64)), false);
    if (rule == CandidateRule::every_member) {
        std::fill(out.begin(), out.end(), true);
    } else if (rule == CandidateRule::first_member) {
        out[0] = true;
    }
    return out;
}

std::string service_url(const ModelDeployment& model, const RoleFacts& role) {
    return "http://" + std::string(model.name) + "-" + std::string(role.role->name) + "." +
           std::string(model.namespace_name) + ".svc:" + std::to_string(role.serving_port);
}

std::string replace_all(std::string text, std::string_view placeholder, const std::string& value) {
    for (std::size_t at = text.find(placeholder); at != std::string::npos;
         at = text.find(placeholder, at + value.size())) {
        text.replace(at, placeholder.size(), value);
    }
    return text;
}

bool applies(const RenderedFlag& rendered, const ModelDeployment& model,
             const DeploymentFacts& facts) {
    if (rendered.router && (!model.router || model.router->name != *rendered.router)) {
        return false;
    }
    if (rendered.engine && *rendered.engine != model.engine) {
        return false;
    }
    if (rendered.when == RenderWhen::encode_role) {
        return facts.first_of_kind(RoleKind::encode) != nullptr;
    }
    return !facts.has_prefill_decode_pair &&
           std::any_of(facts.roles.begin(), facts.roles.end(), [](const RoleFacts& r) {
               return r.mode == ServingMode::external_dp && r.sglang_dp_attention;
           });
}

// The flag with its value filled in, or nullopt (and a note) when the value depends on a
// platform that is not known.
std::optional<FlagToEnsure> resolve(const RenderedFlag& rendered, const ModelDeployment& model,
                                    const DeploymentFacts& facts, std::vector<std::string>& notes) {
    const RoleFacts* encoder = facts.first_of_kind(RoleKind::encode);
    std::string value = rendered.value;
    if (!rendered.value_by_platform.empty()) {
        const Platform platform = encoder != nullptr ? encoder->platform : Platform::unknown;
        const auto it = rendered.value_by_platform.find(platform);
        if (it == rendered.value_by_platform.end()) {
            notes.push_back(rendered.flag + " not planned: no value for platform " +
                            std::string(to_string(platform)));
            return std::nullopt;
        }
        value = it->second;
    }
    if (encoder != nullptr) {
        value = replace_all(value, "{encoder-url}", service_url(model, *encoder));
    }
    return FlagToEnsure{rendered.target,         rendered.flag,     value,
                        rendered.separate_value, rendered.excludes, rendered.reason};
}

}  // namespace

const RolePlan* Plan::role(std::string_view name) const {
    const auto it =
        std::find_if(roles.begin(), roles.end(), [&](const RolePlan& r) { return r.name == name; });
    return it == roles.end() ? nullptr : &*it;
}

Plan plan_mutations(const ModelDeployment& model, const RuleData& data,
                    const InstanceTypes* instance_types) {
    const DeploymentFacts facts = derive_facts(model, data, instance_types);
    Plan plan;
    plan.deployment = model.name;
    plan.namespace_name = model.namespace_name;
    for (const auto& role : facts.roles) {
        RolePlan out;
        out.name = role.role->name;
        out.kind = role.role->kind;
        out.mode = role.mode;
        out.replicas = role.role->replicas;
        out.size = role.role->size;
        const auto rule = data.candidates.find(role.mode);
        out.candidate = candidates(
            rule == data.candidates.end() ? CandidateRule::none : rule->second, out.size);
        plan.roles.push_back(std::move(out));
    }
    for (const auto& rendered : data.rendered_flags) {
        if (!applies(rendered, model, facts)) {
            continue;
        }
        const auto flag = resolve(rendered, model, facts, plan.notes);
        if (!flag) {
            continue;
        }
        if (rendered.target == FlagTarget::router) {
            plan.router_flags.push_back(*flag);
            continue;
        }
        // A take-over role (`command`) gets nothing: the operator renders nothing for it.
        for (std::size_t i = 0; i < plan.roles.size(); ++i) {
            if ((!rendered.kind || *rendered.kind == plan.roles[i].kind) &&
                !facts.roles[i].role->takes_over()) {
                plan.roles[i].flags.push_back(*flag);
            }
        }
    }
    return plan;
}

}  // namespace mdadmit::rules
