#pragma once

#include <boost/json/fwd.hpp>
#include <cstddef>
#include <map>
#include <string>
#include <tuple>

#include "mdadmit/rules/engine.hpp"

namespace mdadmit::admission {

// A stored object judged as the webhook would judge its next apply that changes nothing: an
// UPDATE against itself, so rules that only refuse changes (immutable fields, ratchets) let it
// be. `mdadmit audit` and the server's periodic audit both judge this way, so they agree.
rules::Evaluation audit_object(const rules::Engine& engine, const boost::json::value& object,
                               const rules::InstanceTypes* instance_types);

// Findings over many stored objects, by rule, severity and whether the rule is enforced.
struct AuditTally {
    using Key = std::tuple<std::string, rules::Severity, bool>;  // rule, severity, enforced
    std::map<Key, std::size_t> violations;
    std::size_t objects = 0;
    std::size_t refused = 0;  // objects with a deny finding

    void add(const rules::Evaluation& evaluation);
};

}  // namespace mdadmit::admission
