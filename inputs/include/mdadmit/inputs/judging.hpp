#pragma once

#include <optional>
#include <string>
#include <vector>

#include "mdadmit/rules/engine.hpp"
#include "mdadmit/rules/instance_type.hpp"

namespace mdadmit::inputs {

// What a judge is built from: the rule data (built in, or a file replacing it), the depth of
// the structural check, staged enforcement, and InstanceType manifests.
// The webhook and the harness build theirs with the same function, so they judge alike.
struct JudgingOptions {
    std::string rules_data_file;  // empty: the data built into the binary
    rules::StructureCheck structure_check = rules::StructureCheck::full;
    rules::Enforcement enforcement;  // over the data file's catalogue (--enforce)
    std::vector<std::string> instance_type_files;
};

struct Judging {
    rules::Engine engine;
    rules::InstanceTypes instance_types;
};

// An Error names the file and the problem.
rules::Result<Judging> load_judging(const JudgingOptions& options);

}  // namespace mdadmit::inputs
