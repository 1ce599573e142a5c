#include "mdadmit/admission/policy_report.hpp"

#include <boost/json.hpp>

#include "mdadmit/rules/json_input.hpp"

namespace mdadmit::admission {

namespace json = boost::json;

AuditedObject audited(const json::value& object, rules::Evaluation evaluation) {
    return {rules::string_at(object, "/apiVersion"),
            rules::string_at(object, "/metadata/namespace"),
            rules::string_at(object, "/metadata/name"), rules::string_at(object, "/metadata/uid"),
            std::move(evaluation)};
}

json::object policy_report(std::string_view namespace_name,
                           const std::vector<const AuditedObject*>& objects,
                           const rules::RuleData& data, std::int64_t timestamp_seconds) {
    json::array results;
    std::int64_t pass = 0;
    std::int64_t fail = 0;
    std::int64_t warn = 0;
    for (const AuditedObject* object : objects) {
        pass += object->evaluation.findings.empty() ? 1 : 0;
        json::object resource{{"apiVersion", object->api_version},
                              {"kind", "ModelDeployment"},
                              {"namespace", object->namespace_name},
                              {"name", object->name}};
        if (!object->uid.empty()) {
            resource["uid"] = object->uid;
        }
        for (const auto& finding : object->evaluation.findings) {
            const bool denies = finding.severity == rules::Severity::deny;
            (denies ? fail : warn) += 1;
            const auto* rule = data.rule(finding.rule);
            const std::string field = finding.path.empty() ? "(object)" : finding.path;
            results.push_back(json::object{
                {"source", "mdadmit"},
                {"policy", "mdadmit"},
                {"rule", finding.rule},
                {"category", rule != nullptr ? rule->section : std::string()},
                {"result", denies ? "fail" : "warn"},
                {"severity", denies || !finding.enforced ? "high" : "medium"},
                {"scored", true},
                {"message",
                 field + ": " + finding.message + (finding.enforced ? "" : " (would deny)")},
                {"properties",
                 {{"field", field},
                  {"hint", finding.hint},
                  {"enforced", finding.enforced ? "true" : "false"}}},
                {"timestamp", {{"seconds", timestamp_seconds}, {"nanos", 0}}},
                {"resources", json::array{resource}}});
        }
    }
    return json::object{
        {"apiVersion", "wgpolicyk8s.io/v1alpha2"},
        {"kind", "PolicyReport"},
        {"metadata",
         {{"name", "mdadmit"},
          {"namespace", namespace_name},
          {"labels", {{"app.kubernetes.io/managed-by", "mdadmit"}}}}},
        {"summary", {{"pass", pass}, {"fail", fail}, {"warn", warn}, {"error", 0}, {"skip", 0}}},
        {"results", std::move(results)}};
}

}  // namespace mdadmit::admission
