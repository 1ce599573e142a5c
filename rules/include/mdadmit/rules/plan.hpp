#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mdadmit/rules/facts.hpp"
#include "mdadmit/rules/instance_type.hpp"
#include "mdadmit/rules/model.hpp"
#include "mdadmit/rules/rule_data.hpp"

namespace mdadmit::rules {

// A flag the routing contract needs on a container. `separate_value` writes it as two
// arguments (`--flag value`), else as one (`--flag=value`).
struct FlagToEnsure {
    FlagTarget target;
    std::string flag;
    std::string value;
    bool separate_value = false;
    std::vector<std::string> excludes;  // not added beside any of these
    std::string reason;
};

struct RolePlan {
    std::string name;
    RoleKind kind = RoleKind::server;
    ServingMode mode = ServingMode::unknown;
    std::int64_t replicas = 1;
    std::int64_t size = 1;
    // Per member index within a replica (the same in every replica): may a router discover it?
    std::vector<bool> candidate;
    std::vector<FlagToEnsure> flags;  // on this role's engine Pods
};

// What the mutating webhook writes onto the Pods of one ModelDeployment: the candidate
// label per member and the operator-owned flags per container (docs/mutation.md).
struct Plan {
    std::string deployment;
    std::string namespace_name;
    std::vector<RolePlan> roles;
    std::vector<FlagToEnsure> router_flags;  // on the router Pods
    std::vector<std::string> notes;          // what could not be planned, and why

    const RolePlan* role(std::string_view name) const;
};

// Pure: the same object and InstanceTypes always give the same plan.
Plan plan_mutations(const ModelDeployment& model, const RuleData& data,
                    const InstanceTypes* instance_types);

}  // namespace mdadmit::rules
