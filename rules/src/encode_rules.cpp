// Section 2 of the rules contract, Encode stage: where an Encode role can be served.
#include <algorithm>
#include <array>

#include "rule_context.hpp"

namespace mdadmit::rules {

namespace {

List<const RoleFacts*> encode_roles(const RuleContext& ctx) {
    List<const RoleFacts*> out(ctx.memory);
    for (const auto& role : ctx.facts.roles) {
        if (role.role->kind == RoleKind::encode) {
            out.push_back(&role);
        }
    }
    return out;
}

void encode_shape(const RuleContext& ctx, FindingSink& sink) {
    const auto encoders = encode_roles(ctx);
    if (encoders.empty()) {
        return;
    }
    for (std::size_t i = 1; i < encoders.size(); ++i) {
        sink.report(RuleId::encode_shape, encoders[i]->path() + ".kind",
                    "at most one Encode role; roles " + code(encoders[0]->role->name) + " and " +
                        code(encoders[i]->role->name) + " are both Encode",
                    "keep one Encode role and scale it with replicas");
    }
    std::vector<std::string> missing;
    if (ctx.facts.first_of_kind(RoleKind::prefill) == nullptr) {
        missing.emplace_back("a Prefill role");
    }
    if (ctx.facts.first_of_kind(RoleKind::decode) == nullptr) {
        missing.emplace_back("a Decode role");
    }
    if (!ctx.model.router) {
        missing.emplace_back("a router (spec.router)");
    }
    if (!missing.empty()) {
        sink.report(
            RuleId::encode_shape, encoders[0]->path() + ".kind",
            "Encode role " + code(encoders[0]->role->name) + " needs " +
                join(missing, ", ", " and ") + " beside it",
            "add the missing parts, or remove the Encode role and serve with a Server role");
    }
}

std::vector<std::string> platform_names(const std::vector<Platform>& platforms) {
    std::vector<std::string> out;
    for (Platform p : platforms) {
        out.emplace_back(to_string(p));
    }
    return out;
}

void encode_matrix(const RuleContext& ctx, FindingSink& sink) {
    const RouterData* router = ctx.facts.router;
    if (router == nullptr || ctx.model.engine == EngineKind::unknown) {
        return;
    }
    const std::string engine(to_string(ctx.model.engine));
    const auto row = std::find_if(
        ctx.data.encode_matrix.begin(), ctx.data.encode_matrix.end(), [&](const EncodeRow& r) {
            return r.router == router->name && r.engine == ctx.model.engine;
        });
    for (const RoleFacts* encoder : encode_roles(ctx)) {
        if (row == ctx.data.encode_matrix.end()) {
            std::vector<std::string> admitted;
            for (const auto& r : ctx.data.encode_matrix) {
                admitted.push_back(r.router + " + " + std::string(to_string(r.engine)));
            }
            sink.report(RuleId::encode_matrix, encoder->path(),
                        "Encode is not admitted on " + router->name + " + " + engine +
                            "; admitted: " + join(admitted, ", ", ", "),
                        "use a router and engine of an admitted row");
            continue;
        }
        if (encoder->platform == Platform::unknown ||
            std::find(row->platforms.begin(), row->platforms.end(), encoder->platform) !=
                row->platforms.end()) {
            continue;
        }
        std::vector<std::string> alternatives;
        for (const auto& r : ctx.data.encode_matrix) {
            if (r.engine == ctx.model.engine && std::find(r.platforms.begin(), r.platforms.end(),
                                                          encoder->platform) != r.platforms.end()) {
                alternatives.push_back(r.router);
            }
        }
        const std::string platform(to_string(encoder->platform));
        std::string message = "Encode on " + router->name + " + " + engine + " is admitted on " +
                              join(platform_names(row->platforms), ", ", " and ") + ", not " +
                              platform;
        message += alternatives.empty()
                       ? "; no router admits Encode on " + engine + " + " + platform
                       : "; use " + join(alternatives, ", ", " or ");
        sink.report(RuleId::encode_matrix, encoder->path(), std::move(message),
                    "move the deployment to an admitted platform, or change the router");
    }
}

void encode_platform_unknown(const RuleContext& ctx, FindingSink& sink) {
    if (!ctx.facts.platforms_resolved || ctx.facts.router == nullptr) {
        return;
    }
    for (const RoleFacts* encoder : encode_roles(ctx)) {
        if (encoder->platform != Platform::unknown) {
            continue;
        }
        // Warnings are read on a terminal: the path names the role, the message stays short.
        const auto& instance_type = encoder->role->instance_type;
        const std::string why =
            !instance_type ? "role " + code(encoder->role->name) + " names no instanceType"
            : encoder->instance_type == nullptr
                ? "InstanceType " + code(*instance_type) + " unknown"
                : "InstanceType " + code(*instance_type) + " has no manufacturer yet";
        sink.report(RuleId::encode_platform_unknown, encoder->path() + ".instanceType",
                    why + "; Encode matrix unchecked",
                    "name an InstanceType whose status.detail.manufacturer is set");
    }
}

constexpr std::array definitions{
    RuleDefinition{RuleId::encode_shape, encode_shape},
    RuleDefinition{RuleId::encode_matrix, encode_matrix},
    RuleDefinition{RuleId::encode_platform_unknown, encode_platform_unknown},
};

}  // namespace

std::span<const RuleDefinition> encode_rules() {
    return definitions;
}

}  // namespace mdadmit::rules
