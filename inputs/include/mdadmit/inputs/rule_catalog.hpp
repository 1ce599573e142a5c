#pragma once

#include <string>

#include "mdadmit/rules/rule_data.hpp"

namespace mdadmit::inputs {

// The rule list as a Markdown table, from the same data the engine runs on; rules/README.md
// embeds it and a test keeps the two equal.
std::string rule_table_markdown(const rules::RuleData& data);

}  // namespace mdadmit::inputs
