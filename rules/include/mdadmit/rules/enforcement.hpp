#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mdadmit/rules/result.hpp"

namespace mdadmit::rules {

// What a rule's findings do, so a rule (or a whole new rules.json) can be rolled out in
// stages: reported as warnings first, enforced once the objects that break it are fixed.
//   deny: a finding refuses the object (a warn-severity rule made to refuse);
//   warn: a finding is a warning; a deny-severity rule's warning says it would have refused;
//   off:  the rule reports nothing.
enum class Action { deny, warn, off };

std::string_view to_string(Action action);
// "deny", "warn" or "off"; nothing for any other word.
std::optional<Action> parse_action(std::string_view text);

// Staged enforcement as flags and configuration give it: `RULE=ACTION` entries, and `*=ACTION`
// for every rule. A rule's own entry wins over `*`, which wins over the data file's catalogue
// (each rule's `action`, else its severity); among entries for the same rule, the last wins.
struct Enforcement {
    std::vector<std::pair<std::string, Action>> entries;  // rule id or "*", in the order given
};

// Reads one flag value: `RULE=ACTION`, or several separated by commas. An Error quotes the
// entry and says what was expected. Whether RULE exists is checked by Engine::create.
Result<Enforcement> parse_enforcement(std::string_view text, Enforcement into = {});

// The entries as a flag value again (`*=warn,parallelism=deny`).
std::string to_string(const Enforcement& enforcement);

}  // namespace mdadmit::rules
