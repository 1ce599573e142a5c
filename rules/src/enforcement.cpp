#include "mdadmit/rules/enforcement.hpp"

namespace mdadmit::rules {

std::optional<Action> parse_action(std::string_view text) {
    if (text == "deny") {
        return Action::deny;
    }
    if (text == "warn") {
        return Action::warn;
    }
    if (text == "off") {
        return Action::off;
    }
    return std::nullopt;
}

std::string_view to_string(Action action) {
    switch (action) {
        case Action::deny:
            return "deny";
        case Action::warn:
            return "warn";
        case Action::off:
            break;
    }
    return "off";
}

Result<Enforcement> parse_enforcement(std::string_view text, Enforcement into) {
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        const std::string_view entry = text.substr(start, comma - start);
        const std::size_t equals = entry.find('=');
        const auto action = equals == std::string_view::npos
                                ? std::nullopt
                                : parse_action(entry.substr(equals + 1));
        if (equals == 0 || !action) {
            return Error{"expected RULE=deny|warn|off or *=deny|warn|off, got \"" +
                         std::string(entry) + "\""};
        }
        into.entries.emplace_back(std::string(entry.substr(0, equals)), *action);
        start = comma + 1;
    }
    return into;
}

std::string to_string(const Enforcement& enforcement) {
    std::string out;
    for (const auto& [rule, action] : enforcement.entries) {
        out += (out.empty() ? "" : ",") + rule + "=" + std::string(to_string(action));
    }
    return out;
}

}  // namespace mdadmit::rules
