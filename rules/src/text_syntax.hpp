#pragma once

// Small syntax checks and normalisations on names and paths, shared by the rules.

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

namespace mdadmit::rules {

inline constexpr std::size_t dns_label_limit = 63;

// A DNS-1123 label: up to 63 lower-case letters, digits and '-', alphanumeric at both ends.
inline bool is_dns1123_label(std::string_view name) {
    if (name.empty() || name.size() > dns_label_limit) {
        return false;
    }
    const auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
    return alnum(name.front()) && alnum(name.back()) &&
           std::all_of(name.begin(), name.end(), [&](char c) { return alnum(c) || c == '-'; });
}

// A DNS-1035 label (a Service name): a DNS-1123 label starting with a letter.
inline bool is_dns1035_label(std::string_view name) {
    return is_dns1123_label(name) && name.front() >= 'a' && name.front() <= 'z';
}

// `/models/` and `/models` are one path.
inline std::string_view without_trailing_slash(std::string_view path) {
    while (path.size() > 1 && path.back() == '/') {
        path.remove_suffix(1);
    }
    return path;
}

// Whether a path has a `..` segment (`a/../b`; `a..b` is a name).
inline bool has_parent_segment(std::string_view path) {
    for (std::size_t start = 0;;) {
        const std::size_t end = path.find('/', start);
        if (path.substr(start, end - start) == "..") {
            return true;
        }
        if (end == std::string_view::npos) {
            return false;
        }
        start = end + 1;
    }
}

inline std::string lowercase(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

}  // namespace mdadmit::rules
