#pragma once

#include <boost/json/object.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mdadmit/rules/engine.hpp"

namespace mdadmit::admission {

// One stored ModelDeployment as the audit judged it.
struct AuditedObject {
    std::string api_version;
    std::string namespace_name;
    std::string name;
    std::string uid;
    rules::Evaluation evaluation;
};

// What is read from a stored object to name it in a report.
AuditedObject audited(const boost::json::value& object, rules::Evaluation evaluation);

// The wgpolicyk8s.io/v1alpha2 PolicyReport `mdadmit` of one namespace, as Kyverno writes
// its own: one result per finding (fail for a deny, warn for a warning, including a deny
// that staged enforcement demoted), naming the object and the field; the summary counts
// objects without findings as pass. Every result carries `timestamp_seconds`; a report built
// with 0 serves to compare content.
boost::json::object policy_report(std::string_view namespace_name,
                                  const std::vector<const AuditedObject*>& objects,
                                  const rules::RuleData& data, std::int64_t timestamp_seconds);

}  // namespace mdadmit::admission
