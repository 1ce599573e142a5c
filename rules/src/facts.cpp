#include "mdadmit/rules/facts.hpp"

namespace mdadmit::rules {

namespace {

// Flags that wire one data-parallel rank per member (vLLM's External DP): a rank or external
// balancing, or a start rank or hybrid balancing with one local rank per member.
bool rank_per_member(const ArgStream& args, const ParallelTable* table) {
    if (table == nullptr || !table->rank_per_member) {
        return false;
    }
    const auto& flags = *table->rank_per_member;
    return args.has_any(flags.rank_flags) ||
           (args.has_any(flags.start_rank_flags) && args.integer_of(flags.local_size_flags) == 1);
}

bool attention_dp(const ArgStream& args, const ParallelTable* table) {
    if (table == nullptr || !table->attention_dp ||
        !args.has_any(table->attention_dp->enable_flags)) {
        return false;
    }
    const auto ranks = args.integer_of(table->attention_dp->size_flags);
    return ranks && *ranks > 1;
}

ServingMode serving_mode(const Role& role, EngineKind engine, const RoleFacts& facts) {
    if (role.has_elastic_ep) {
        return ServingMode::elastic_ep;
    }
    switch (role.kind) {
        case RoleKind::prefill:
            return ServingMode::prefill;
        case RoleKind::decode:
            return ServingMode::decode;
        case RoleKind::encode:
            return ServingMode::encode;
        case RoleKind::unknown:
            return ServingMode::unknown;
        case RoleKind::server:
            break;
    }
    const bool external =
        engine == EngineKind::vllm ? facts.vllm_rank_per_member : facts.sglang_dp_attention;
    return external ? ServingMode::external_dp : ServingMode::internal_server;
}

const InstanceType* find_instance_type(const Role& role, const InstanceTypes* instance_types) {
    if (instance_types == nullptr || !role.instance_type) {
        return nullptr;
    }
    const auto it = instance_types->find(*role.instance_type);
    return it == instance_types->end() ? nullptr : &it->second;
}

}  // namespace

std::string RoleFacts::path() const {
    return "spec.roles[" + std::to_string(role->index) + "]";
}

std::string RoleFacts::arg_path(std::size_t token_index) const {
    return path() + "." + std::string(args_field) + "[" + std::to_string(token_index) + "]";
}

const RoleFacts* DeploymentFacts::role_named(std::string_view name) const {
    for (const auto& role : roles) {
        if (role.role->name == name) {
            return &role;
        }
    }
    return nullptr;
}

const RoleFacts* DeploymentFacts::first_of_kind(RoleKind kind) const {
    for (const auto& role : roles) {
        if (role.role->kind == kind) {
            return &role;
        }
    }
    return nullptr;
}

DeploymentFacts derive_facts(const ModelDeployment& model, const RuleData& data,
                             const InstanceTypes* instance_types, Memory memory) {
    // The streams and lists are constructed in place: assigning one to a member made with the
    // default resource would copy it out of `memory`.
    DeploymentFacts facts{
        .model = &model,
        .router = model.router ? data.router(model.router->name) : nullptr,
        .router_args =
            model.router ? ArgStream(model.router->extra_args, false, memory) : ArgStream(),
        .roles = List<RoleFacts>(memory),
    };
    // An object being deleted is judged without other objects, as the operator judges it.
    facts.platforms_resolved = !model.being_deleted;
    facts.instance_types_known =
        facts.platforms_resolved && instance_types != nullptr && !instance_types->empty();
    const bool under_llm_d = model.router && model.router->name == "llm-d-router";
    bool has_prefill = false;
    bool has_decode = false;
    facts.roles.reserve(model.roles.size());
    for (const Role& role : model.roles) {
        const List<std::string_view>& tokens = role.takes_over() ? *role.command : role.extra_args;
        RoleFacts rf{
            .role = &role,
            .arg_tokens = &tokens,
            .args = ArgStream(tokens, data.spelling(model.engine).underscores, memory),
            .args_field = role.takes_over() ? "command" : "extraArgs",
        };
        rf.sglang_dp_attention = attention_dp(rf.args, data.parallel_table(model.engine));
        rf.vllm_rank_per_member = rank_per_member(rf.args, data.parallel_table(model.engine));
        rf.mode = serving_mode(role, model.engine, rf);
        rf.proxy_fronted_decoder = under_llm_d && model.engine == EngineKind::vllm &&
                                   role.kind == RoleKind::decode && !role.takes_over();
        const std::optional<std::int64_t> flagged = rf.args.integer({"--port"});
        if (!role.ports.empty() && role.ports.front().port.has_value()) {
            rf.serving_port = role.ports.front().port.value();
            rf.port_source = PortSource::declared;
        } else if (flagged && !rf.proxy_fronted_decoder) {
            rf.serving_port = *flagged;
            rf.port_source = PortSource::flag;
        } else {
            rf.serving_port = data.default_serving_port;
            rf.port_source =
                rf.proxy_fronted_decoder ? PortSource::sidecar_default : PortSource::engine_default;
        }
        rf.instance_type =
            facts.platforms_resolved ? find_instance_type(role, instance_types) : nullptr;
        rf.platform =
            rf.instance_type != nullptr ? rf.instance_type->platform() : Platform::unknown;
        has_prefill = has_prefill || role.kind == RoleKind::prefill;
        has_decode = has_decode || role.kind == RoleKind::decode;
        facts.roles.push_back(std::move(rf));
    }
    facts.has_prefill_decode_pair = has_prefill && has_decode;
    return facts;
}

}  // namespace mdadmit::rules
