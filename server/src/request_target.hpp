#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace mdadmit::server {

// An HTTP request target split the way the routes need it: kube-apiserver calls
// "/validate?timeout=10s" and may trim or keep a trailing slash.
struct RequestTarget {
    std::string path;  // without query and without a trailing slash ("/" stays "/")
    std::optional<std::chrono::milliseconds> timeout;  // from ?timeout=, Go duration syntax
};

RequestTarget parse_target(std::string_view target);

// Parses the subset of Go's time.Duration syntax the apiserver sends ("10s", "1m30s",
// "500ms", "2.5s"); nullopt for anything else.
std::optional<std::chrono::milliseconds> parse_go_duration(std::string_view text);

}  // namespace mdadmit::server
