// mdadmit rules: the rule catalogue, from the data the engine runs on.
#include <cstdio>
#include <iostream>

#include "commands.hpp"
#include "mdadmit/inputs/rule_catalog.hpp"

namespace mdadmit::cli {

int run_rules(const Options& options) {
    auto judging = make_judging(options);
    if (!judging) {
        std::cerr << "mdadmit: " << judging.error().message << "\n";
        return exit_usage;
    }
    const rules::RuleData& data = judging.value().engine.data();
    if (options.markdown) {
        std::cout << inputs::rule_table_markdown(data);
        return exit_admitted;
    }
    const rules::Engine& engine = judging.value().engine;
    std::printf("%-24s %-8s %-6s %s\n", "RULE", "SEVERITY", "ACTION", "MEANING");
    for (const auto& rule : data.rules) {
        std::printf("%-24s %-8s %-6s %s\n", rule.id.c_str(),
                    std::string(rules::to_string(rule.severity)).c_str(),
                    std::string(rules::to_string(engine.action(rule.id))).c_str(),
                    rule.meaning.c_str());
    }
    return exit_admitted;
}

}  // namespace mdadmit::cli
