// Section 2 of the rules contract: which router may front which engine, and what a user may
// pass to it.
#include <algorithm>
#include <array>

#include "rule_context.hpp"

namespace mdadmit::rules {

namespace {

std::string router_arg_path(std::size_t index) {
    return "spec.router.extraArgs[" + std::to_string(index) + "]";
}

std::vector<std::string> routers_fronting(const RuleData& data, EngineKind engine) {
    std::vector<std::string> out;
    for (const auto& router : data.routers) {
        if (router.fronts(engine)) {
            out.push_back(router.name);
        }
    }
    return out;
}

void router_engine_pairing(const RuleContext& ctx, FindingSink& sink) {
    const RouterData* router = ctx.facts.router;
    if (router == nullptr || ctx.model.engine == EngineKind::unknown ||
        router->fronts(ctx.model.engine)) {
        return;
    }
    std::vector<std::string> engines;
    for (EngineKind engine : router->engines) {
        engines.emplace_back(to_string(engine));
    }
    const std::string alternatives =
        join(routers_fronting(ctx.data, ctx.model.engine), ", ", " or ");
    sink.report(RuleId::router_engine_pairing, "spec.router.name",
                router->name + " fronts " + join(engines, ", ", " and ") + " only, not " +
                    std::string(to_string(ctx.model.engine)) + "; use " + alternatives,
                "set spec.router.name to " + alternatives);
}

void router_flag_owned(const RuleContext& ctx, FindingSink& sink) {
    const RouterData* router = ctx.facts.router;
    if (router == nullptr) {
        return;
    }
    for (const auto& flag : ctx.facts.router_args.flags()) {
        if (router->owns(flag.name)) {
            sink.report(
                RuleId::router_flag_owned, router_arg_path(flag.flag_index),
                code(flag.name) + " is set by the operator for " + router->name,
                "remove it from spec.router.extraArgs; the operator renders it from the roles");
        }
    }
}

// "--prefill-policy" -> "prefill policy", for messages.
std::string policy_words(std::string_view flag) {
    std::string words(flag.substr(flag.find_first_not_of('-')));
    std::replace(words.begin(), words.end(), '-', ' ');
    return words;
}

void router_policy_value(const RuleContext& ctx, FindingSink& sink) {
    const RouterData* router = ctx.facts.router;
    if (router == nullptr) {
        return;
    }
    const auto& policy_flags = ctx.data.policy_flags;
    for (const auto& flag : ctx.facts.router_args.flags()) {
        if (std::find(policy_flags.begin(), policy_flags.end(), flag.name) == policy_flags.end()) {
            continue;
        }
        if (!router->policy_values) {
            sink.report(RuleId::router_policy_value, router_arg_path(flag.flag_index),
                        router->name + " takes no " + code(flag.name) + ": its scoring profile (" +
                            router->fixed_profile + ") is fixed",
                        "remove it; where even spread matters use " +
                            ctx.data.preferred_router(ctx.model.engine));
            continue;
        }
        const auto& values = *router->policy_values;
        const std::string known = "known values: " + join(values, ", ", ", ");
        if (!flag.value) {
            sink.report(RuleId::router_policy_value, router_arg_path(flag.flag_index),
                        code(flag.name) + " needs a value for " + router->name, known);
            continue;
        }
        if (std::find(values.begin(), values.end(), *flag.value) != values.end()) {
            continue;
        }
        std::string message =
            "unknown " + policy_words(flag.name) + " " + code(*flag.value) + " for " + router->name;
        if (const auto suggestion = closest(*flag.value, values)) {
            message += "; did you mean " + code(*suggestion) + "?";
        }
        sink.report(RuleId::router_policy_value, router_arg_path(flag.value_index),
                    std::move(message), known);
    }
}

void router_threshold(const RuleContext& ctx, FindingSink& sink) {
    const RouterData* router = ctx.facts.router;
    if (router == nullptr || router->disaggregation_threshold ||
        !ctx.model.router->disaggregation_threshold_tokens) {
        return;
    }
    std::vector<std::string> supporting;
    for (const auto& candidate : ctx.data.routers) {
        if (candidate.disaggregation_threshold) {
            supporting.push_back(candidate.name);
        }
    }
    const std::string where = join(supporting, ", ", " or ");
    sink.report(
        RuleId::router_threshold, "spec.router.disaggregationThresholdTokens",
        "disaggregationThresholdTokens exists only on " + where + ", not on " + router->name,
        "remove it, or use " + where);
}

// The gateway registers the Server, Prefill and Decode roles; it never sees an Encode role,
// so nothing renders --dp-aware for one.
const RoleFacts* first_dp_attention_role(const DeploymentFacts& facts) {
    for (const auto& role : facts.roles) {
        if (role.sglang_dp_attention && role.role->kind != RoleKind::encode) {
            return &role;
        }
    }
    return nullptr;
}

void pd_dp_aware_exclusion(const RuleContext& ctx, FindingSink& sink) {
    const RouterData* router = ctx.facts.router;
    // The router that renders both flags is the one that cannot run them together.
    if (router == nullptr || !router->renders_pd_disaggregation || !router->renders_dp_aware ||
        !ctx.facts.has_prefill_decode_pair) {
        return;
    }
    const RoleFacts* dp_role = first_dp_attention_role(ctx.facts);
    if (dp_role == nullptr) {
        return;
    }
    sink.report(RuleId::pd_dp_aware_exclusion, "spec.router",
                std::string(router->name) +
                    " would need --pd-disaggregation for the Prefill+Decode pair and "
                    "--dp-aware for attention-DP role " +
                    code(dp_role->role->name) +
                    "; together they send decode traffic to an invalid destination",
                "drop --enable-dp-attention from role " + std::string(dp_role->role->name) +
                    ", or serve it in its own ModelDeployment without the Prefill+Decode pair");
}

void external_dp_router(const RuleContext& ctx, FindingSink& sink) {
    const RouterData* router = ctx.facts.router;
    // A router with a fixed profile has no policy that spreads External DP ranks evenly.
    if (router == nullptr || router->policy_values) {
        return;
    }
    for (const auto& role : ctx.facts.roles) {
        if (role.mode == ServingMode::external_dp) {
            const std::string& preferred = ctx.data.preferred_router(ctx.model.engine);
            sink.report(RuleId::external_dp_router, "spec.router.name",
                        "External DP role " + code(role.role->name) + ": " + router->name +
                            " spreads ranks unevenly; use " + preferred,
                        "set spec.router.name to " + preferred +
                            " and pass --policy round_robin in spec.router.extraArgs");
            return;
        }
    }
}

// A release tag as gpustack/llm-router writes them: `v0.3`, `0.3.1`, `v0.3.1.post1`,
// `v0.3.1-amd64`. Missing parts count as 0; a post-release or an architecture suffix is the
// release itself or later; `rc`, `alpha`, `beta` and `dev` come before it.
struct Version {
    std::array<std::int64_t, 4> parts{};
    bool pre_release = false;
    auto operator<=>(const Version& other) const {
        if (parts != other.parts) {
            return parts <=> other.parts;
        }
        return other.pre_release <=> pre_release;
    }
    bool operator==(const Version&) const = default;
};

std::optional<Version> parse_version(std::string_view tag) {
    if (!tag.empty() && tag.front() == 'v') {
        tag.remove_prefix(1);
    }
    Version version;
    std::size_t count = 0;
    while (count < version.parts.size()) {
        const std::size_t end = std::min(tag.find_first_not_of("0123456789"), tag.size());
        const auto number = end == 0 || end > 9 ? std::nullopt : parse_integer(tag.substr(0, end));
        if (!number) {
            break;
        }
        version.parts[count++] = *number;
        tag.remove_prefix(end);
        if (tag.size() < 2 || tag.front() != '.' || tag[1] < '0' || tag[1] > '9') {
            break;
        }
        tag.remove_prefix(1);
    }
    if (count == 0 ||
        (!tag.empty() && std::string_view(".-+_").find(tag.front()) == std::string_view::npos &&
         (tag.front() < 'a' || tag.front() > 'z'))) {
        return std::nullopt;
    }
    for (std::string_view marker : {"rc", "alpha", "beta", "dev", "pre"}) {
        if (tag.find(marker) != std::string_view::npos) {
            version.pre_release = true;
        }
    }
    return version;
}

struct ImageReference {
    std::string_view repository;
    std::string_view tag;
};

ImageReference split_image(std::string_view image) {
    image = image.substr(0, image.find('@'));
    const std::size_t colon = image.rfind(':');
    const std::size_t slash = image.rfind('/');
    if (colon == std::string_view::npos || (slash != std::string_view::npos && colon < slash)) {
        return {image, {}};
    }
    return {image.substr(0, colon), image.substr(colon + 1)};
}

bool ends_with_path(std::string_view repository, std::string_view suffix) {
    return repository == suffix ||
           (repository.size() > suffix.size() && repository.ends_with(suffix) &&
            repository[repository.size() - suffix.size() - 1] == '/');
}

void dp_aware_image(const RuleContext& ctx, FindingSink& sink) {
    const RouterData* router = ctx.facts.router;
    if (router == nullptr || !router->renders_dp_aware || ctx.facts.has_prefill_decode_pair ||
        !ctx.model.router->image) {
        return;
    }
    const bool external_dp =
        std::any_of(ctx.facts.roles.begin(), ctx.facts.roles.end(),
                    [](const RoleFacts& r) { return r.mode == ServingMode::external_dp; });
    if (!external_dp || ctx.model.engine != EngineKind::sglang) {
        return;
    }
    // Only a tagged release of the known repository can be judged; a custom image or a
    // floating tag says nothing about whether it carries the per-rank registration.
    const ImageReference image = split_image(*ctx.model.router->image);
    const auto version = parse_version(image.tag);
    const auto minimum = parse_version(ctx.data.dp_aware_minimum_tag);
    if (!ends_with_path(image.repository, ctx.data.dp_aware_repository) || !version || !minimum ||
        *version >= *minimum) {
        return;
    }
    sink.report(RuleId::dp_aware_image, "spec.router.image",
                "tag " + std::string(image.tag) + " predates " + ctx.data.dp_aware_minimum_tag +
                    ": the gateway registers one worker per group, not per rank",
                "use " + ctx.data.dp_aware_repository + ":" + ctx.data.dp_aware_minimum_tag +
                    " or later, or remove spec.router.image to get the default");
}

constexpr std::array definitions{
    RuleDefinition{RuleId::router_engine_pairing, router_engine_pairing},
    RuleDefinition{RuleId::router_policy_value, router_policy_value},
    RuleDefinition{RuleId::router_flag_owned, router_flag_owned},
    RuleDefinition{RuleId::router_threshold, router_threshold},
    RuleDefinition{RuleId::pd_dp_aware_exclusion, pd_dp_aware_exclusion},
    RuleDefinition{RuleId::external_dp_router, external_dp_router},
    RuleDefinition{RuleId::dp_aware_image, dp_aware_image},
};

}  // namespace

std::span<const RuleDefinition> routing_rules() {
    return definitions;
}

}  // namespace mdadmit::rules
