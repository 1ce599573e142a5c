// Display names of the core's enums and the small queries on its value types.
#include <algorithm>
#include <string>

#include "mdadmit/rules/facts.hpp"
#include "mdadmit/rules/finding.hpp"
#include "mdadmit/rules/model.hpp"
#include "mdadmit/rules/platform.hpp"
#include "mdadmit/rules/rule_data.hpp"
#include "text_syntax.hpp"

namespace mdadmit::rules {

std::string_view to_string(Severity severity) {
    return severity == Severity::deny ? "deny" : "warn";
}

std::string_view to_string(Platform platform) {
    switch (platform) {
        case Platform::nvidia:
            return "nvidia";
        case Platform::amd:
            return "amd";
        case Platform::ascend:
            return "ascend";
        case Platform::other:
            return "other";
        case Platform::unknown:
            break;
    }
    return "unknown";
}

std::string_view to_string(EngineKind engine) {
    switch (engine) {
        case EngineKind::vllm:
            return "vLLM";
        case EngineKind::sglang:
            return "SGLang";
        case EngineKind::unknown:
            break;
    }
    return "unknown";
}

std::string_view to_string(RoleKind kind) {
    switch (kind) {
        case RoleKind::server:
            return "Server";
        case RoleKind::prefill:
            return "Prefill";
        case RoleKind::decode:
            return "Decode";
        case RoleKind::encode:
            return "Encode";
        case RoleKind::unknown:
            break;
    }
    return "unknown";
}

std::string_view to_string(ServingMode mode) {
    switch (mode) {
        case ServingMode::internal_server:
            return "Internal Server";
        case ServingMode::external_dp:
            return "External DP";
        case ServingMode::elastic_ep:
            return "Elastic EP";
        case ServingMode::prefill:
            return "Prefill";
        case ServingMode::decode:
            return "Decode";
        case ServingMode::encode:
            return "Encode";
        case ServingMode::unknown:
            break;
    }
    return "unknown";
}

std::string_view to_string(FlagTarget target) {
    switch (target) {
        case FlagTarget::router:
            return "router";
        case FlagTarget::engine:
            return "engine";
        case FlagTarget::routing_sidecar:
            return "routing-sidecar";
    }
    return "unknown";
}

namespace {

// Whether `text` holds `word`, written in lower case, in any case: ASCII only, as a
// manufacturer's name is, and without a lower-case copy of `text`.
bool holds_in_any_case(std::string_view text, std::string_view word) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
    return std::search(text.begin(), text.end(), word.begin(), word.end(),
                       [&](char a, char b) { return lower(a) == b; }) != text.end();
}

}  // namespace

Platform platform_from_manufacturer(std::string_view manufacturer) {
    if (manufacturer.find_first_not_of(" \t") == std::string_view::npos) {
        return Platform::unknown;
    }
    if (holds_in_any_case(manufacturer, "nvidia")) {
        return Platform::nvidia;
    }
    if (holds_in_any_case(manufacturer, "amd") ||
        holds_in_any_case(manufacturer, "advanced micro")) {
        return Platform::amd;
    }
    if (holds_in_any_case(manufacturer, "ascend") || holds_in_any_case(manufacturer, "huawei")) {
        return Platform::ascend;
    }
    return Platform::other;
}

bool Evaluation::allowed() const {
    return std::none_of(findings.begin(), findings.end(),
                        [](const Finding& f) { return f.severity == Severity::deny; });
}

std::vector<const Finding*> Evaluation::with_severity(Severity severity) const {
    std::vector<const Finding*> out;
    for (const auto& finding : findings) {
        if (finding.severity == severity) {
            out.push_back(&finding);
        }
    }
    return out;
}

}  // namespace mdadmit::rules
