#pragma once

#include <string_view>

#include "mdadmit/rules/model.hpp"

namespace mdadmit::rules {

// The names a ModelDeployment's JSON gives what the typed model holds as enums, and its
// volume fields, shared by the two ways a model is read (decode.cpp, model_builder.cpp).

inline EngineKind engine_kind(std::string_view name) {
    if (name == "vLLM" || name == "vllm") {
        return EngineKind::vllm;
    }
    if (name == "SGLang" || name == "sglang") {
        return EngineKind::sglang;
    }
    return EngineKind::unknown;
}

// Older operator CRDs spell the kinds in lower case; they mean the same.
inline RoleKind role_kind(std::string_view name) {
    if (name == "Server" || name == "server")
        return RoleKind::server;
    if (name == "Prefill" || name == "prefill")
        return RoleKind::prefill;
    if (name == "Decode" || name == "decode")
        return RoleKind::decode;
    if (name == "Encode")
        return RoleKind::encode;
    return RoleKind::unknown;
}

// The members of a volume entry that describe its mount rather than its source.
inline bool is_mount_field(std::string_view key) {
    return key == "name" || key == "mountPath" || key == "subPath" || key == "subPathExpr" ||
           key == "readOnly" || key == "recursiveReadOnly" || key == "mountPropagation";
}

}  // namespace mdadmit::rules
