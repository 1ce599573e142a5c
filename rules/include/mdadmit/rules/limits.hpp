#pragma once

#include <cstddef>

namespace mdadmit::rules::limits {

// Bounds on the work one object can cause. The schema admits at most 10 roles; the decoder
// reads a few more so the schema finding, not silence, reports the excess.
inline constexpr std::size_t max_roles_read = 16;
// Argument, port and env lists far beyond any real Pod spec are read only up to this many
// entries: enough for every real deployment, small enough that a hostile list stays cheap.
inline constexpr std::size_t max_list_entries_read = 4096;
// JSON nesting accepted by the parser: a ModelDeployment is about 8 levels deep; unknown
// fields may nest further, but not without bound.
inline constexpr std::size_t max_json_depth = 64;
// A manifest file read by the harness or at the server's start: far above any real set of
// manifests, and refused before parsing beyond it.
inline constexpr std::size_t max_manifest_bytes = 16 * 1024 * 1024;

}  // namespace mdadmit::rules::limits
