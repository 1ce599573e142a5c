#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "rule_context.hpp"

namespace mdadmit::rules {

namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) {
        row[j] = j;
    }
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + cost});
            diagonal = above;
        }
    }
    return row[b.size()];
}

}  // namespace

std::string code(std::string_view text) {
    return "`" + std::string(text) + "`";
}

std::string join(const std::vector<std::string>& items, std::string_view separator,
                 std::string_view last_separator) {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i > 0) {
            out += i + 1 == items.size() ? last_separator : separator;
        }
        out += items[i];
    }
    return out;
}

std::optional<std::string> closest(std::string_view value,
                                   const std::vector<std::string>& candidates) {
    std::optional<std::string> best;
    std::size_t best_distance = 0;
    for (const auto& candidate : candidates) {
        const std::size_t distance = edit_distance(value, candidate);
        if (!best || distance < best_distance) {
            best = candidate;
            best_distance = distance;
        }
    }
    // Farther than a third of the word is a different word, not a typo.
    if (!best || best_distance > std::max<std::size_t>(2, best->size() / 3)) {
        return std::nullopt;
    }
    return best;
}

void FindingSink::report(RuleId rule, std::string path, std::string message, std::string hint) {
    const Disposition disposition = dispositions_[static_cast<std::size_t>(rule)];
    if (disposition.action == Action::off) {
        return;
    }
    const bool demoted =
        disposition.severity == Severity::deny && disposition.action == Action::warn;
    out_.push_back({id_text(rule),
                    disposition.action == Action::deny ? Severity::deny : Severity::warn,
                    std::move(path), std::move(message), std::move(hint), !demoted});
}

}  // namespace mdadmit::rules
