#include "mdadmit/admission/audit.hpp"

namespace mdadmit::admission {

rules::Evaluation audit_object(const rules::Engine& engine, const boost::json::value& object,
                               const rules::InstanceTypes* instance_types) {
    return engine.evaluate({object, &object, instance_types, rules::Operation::update});
}

void AuditTally::add(const rules::Evaluation& evaluation) {
    ++objects;
    refused += evaluation.allowed() ? 0 : 1;
    for (const auto& finding : evaluation.findings) {
        ++violations[{std::string(finding.rule), finding.severity, finding.enforced}];
    }
}

}  // namespace mdadmit::admission
