#include "mdadmit/inputs/rule_catalog.hpp"

namespace mdadmit::inputs {

std::string rule_table_markdown(const rules::RuleData& data) {
    std::string out = "| id | severity | section | meaning |\n|---|---|---|---|\n";
    for (const auto& rule : data.rules) {
        out += "| `" + rule.id + "` | " + std::string(rules::to_string(rule.severity)) + " | " +
               rule.section + " | " + rule.meaning + " |\n";
    }
    return out;
}

}  // namespace mdadmit::inputs
