#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "mdadmit/rules/engine.hpp"
#include "mdadmit/rules/plan.hpp"

namespace mdadmit::test {

// Judges the one ModelDeployment in `yaml` with the built-in data; InstanceType documents in
// the same text supply platforms.
rules::Evaluation judge(std::string_view yaml, rules::EngineOptions options = {});

// Judges an UPDATE of the ModelDeployment in `old_yaml` to the one in `yaml`.
rules::Evaluation judge_update(std::string_view yaml, std::string_view old_yaml);

// The findings of one rule, in order.
std::vector<rules::Finding> of_rule(const rules::Evaluation& evaluation, std::string_view rule);

// "rule@path" for every finding, for whole-answer comparisons.
std::vector<std::string> rule_paths(const rules::Evaluation& evaluation);

}  // namespace mdadmit::test

namespace mdadmit::test {

// A ModelDeployment in YAML: `router` and `roles` are flow-style YAML ("" leaves the router
// out); `extra` is appended under spec (indented by the caller, two spaces).
std::string deployment(std::string_view engine, std::string_view router, std::string_view roles,
                       std::string_view extra = "");

// A ModelDeployment `md` in namespace `ns` with the given spec body (indented two spaces).
std::string with_spec(std::string_view spec);

// The mutation plan of the ModelDeployment in `yaml` (InstanceType documents beside it count).
rules::Plan plan_of(const std::string& yaml);

// An InstanceType document to prepend, with its manufacturer.
std::string instance_type(std::string_view name, std::string_view manufacturer);

}  // namespace mdadmit::test
