// The `mdadmit test` case format: parsing, matching, and failures that never pass.
#include "mdadmit/inputs/test_case.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "mdadmit/inputs/documents.hpp"

namespace mdadmit::test {
namespace {

std::vector<inputs::TestCase> cases_of(const std::string& yaml) {
    auto documents = inputs::parse_documents(yaml, "cases.yaml");
    auto cases = inputs::parse_cases(documents.value());
    if (!cases) {
        throw std::runtime_error(cases.error().message);
    }
    return cases.value();
}

rules::Evaluation evaluation_of(std::vector<rules::Finding> findings) {
    return rules::Evaluation{std::move(findings)};
}

const rules::Finding owned{"router-flag-owned", rules::Severity::deny, "spec.router.extraArgs[0]",
                           "`--host` is set by the operator for vllm-router", ""};
const rules::Finding warning{"external-dp-router", rules::Severity::warn, "spec.router.name",
                             "prefer vllm-router", ""};

TEST(TestCases, BothFindingSpellingsAndTheOldObjectAreRead) {
    const auto cases = cases_of(R"(
case: c
old: {kind: ModelDeployment}
instanceTypes: {h100: NVIDIA}
object: {kind: ModelDeployment}
expect:
  verdict: denied
  findings:
  - "router-flag-owned@spec.router.extraArgs[0]"
  - {rule: external-dp-router, severity: warn, message: prefer}
  exact: false
)");
    ASSERT_EQ(cases.size(), 1u);
    EXPECT_EQ(cases[0].operation, rules::Operation::update);
    EXPECT_EQ(cases[0].instance_types.at("h100").manufacturer, "NVIDIA");
    EXPECT_FALSE(cases[0].expect_allowed);
    EXPECT_FALSE(cases[0].exact);
    ASSERT_EQ(cases[0].findings.size(), 2u);
    EXPECT_EQ(cases[0].findings[0].path, "spec.router.extraArgs[0]");
    EXPECT_EQ(cases[0].findings[1].severity, rules::Severity::warn);
}

TEST(TestCases, MismatchesFailWithADiff) {
    const auto cases = cases_of(R"(
case: expects a denial
object: {kind: ModelDeployment}
expect: {verdict: denied, findings: ["router-flag-owned@spec.router.extraArgs[0]"]}
---
case: expects an admission
object: {kind: ModelDeployment}
expect: {verdict: admitted}
)");
    const auto admitted = inputs::compare(cases[0], evaluation_of({}));
    EXPECT_FALSE(admitted.passed);
    EXPECT_EQ(admitted.reason, "expected denied, got admitted");
    EXPECT_EQ(admitted.diff, "- router-flag-owned@spec.router.extraArgs[0]\n");
    EXPECT_TRUE(inputs::compare(cases[0], evaluation_of({owned})).passed);
    const auto extra = inputs::compare(cases[0], evaluation_of({owned, warning}));
    EXPECT_FALSE(extra.passed);
    EXPECT_EQ(extra.reason, "0 expected finding(s) missing, 1 unexpected");
    EXPECT_EQ(extra.diff, "+ external-dp-router@spec.router.name (warn) prefer vllm-router\n");
    EXPECT_FALSE(inputs::compare(cases[1], evaluation_of({owned})).passed);
    EXPECT_FALSE(inputs::compare(cases[1], evaluation_of({warning})).passed);
}

TEST(TestCases, MalformedCasesNameTheFileDocumentAndField) {
    const std::vector<std::pair<std::string, std::string>> malformed{
        {"case: c\nobject: {}\n",
         "cases.yaml:1 (document 1): expect: required: {verdict, findings}"},
        {"case: c\nexpect: {verdict: denied}\n",
         "cases.yaml:1 (document 1): object: required: the ModelDeployment to judge"},
        {"case: c\nobject: {a: 1}\nexpect: {}\n",
         "cases.yaml:1 (document 1): expect.verdict: required: admitted or denied"},
        {"case: c\nobject: {a: 1}\nexpect: {verdict: denied, findings: [{path: x}]}\n",
         "cases.yaml:1 (document 1): expect.findings[0].rule: required"},
        {"case: c\nobject: {a: 1}\nexpected: {}\n",
         "cases.yaml:1 (document 1): expected: unknown field (case, object, objectFrom, old, "
         "operation, instanceTypes, settings, operator, expect)"},
        {"case: c\noperator: {verdict: denied}\nobject: {a: 1}\nexpect: {verdict: admitted}\n",
         "cases.yaml:1 (document 1): operator.differs: required: expect.verdict is not the "
         "operator's; say why"},
        {"case: c\noperator: {verdict: admitted, differs: x}\nobject: {a: 1}\n"
         "expect: {verdict: admitted}\n",
         "cases.yaml:1 (document 1): operator.differs: given, but expect.verdict is the "
         "operator's"},
        {"case: c\noperator: {row: 1}\nobject: {a: 1}\nexpect: {verdict: admitted}\n",
         "cases.yaml:1 (document 1): operator.verdict: required: admitted or denied"},
    };
    for (const auto& [yaml, message] : malformed) {
        auto documents = inputs::parse_documents(yaml, "cases.yaml");
        auto cases = inputs::parse_cases(documents.value());
        ASSERT_FALSE(cases.ok()) << yaml;
        EXPECT_EQ(cases.error().message, message);
    }
}

TEST(TestCases, AnObjectMayComeFromAManifestFile) {
    const std::string manifests = testing::TempDir() + "/mdadmit-objects.yaml";
    std::ofstream(manifests) << "kind: ModelDeployment\nmetadata: {name: a}\n---\n"
                                "kind: ModelDeployment\nmetadata: {name: b}\n";
    const auto cases =
        cases_of("case: c\nobjectFrom: " + manifests + "#2\nexpect: {verdict: admitted}\n");
    ASSERT_EQ(cases.size(), 1u);
    EXPECT_EQ(cases[0].object.at("metadata").at("name"), "b");
    for (const auto& [reference, message] :
         {std::pair{manifests + "#3", manifests + " has 2 documents"},
          std::pair{manifests, std::string("expected FILE#N, N the document's position from 1")},
          std::pair{std::string("/nonexistent.yaml#1"),
                    std::string("/nonexistent.yaml: cannot open the file")}}) {
        auto documents = inputs::parse_documents(
            "case: c\nobjectFrom: " + reference + "\nexpect: {verdict: admitted}\n", "cases.yaml");
        EXPECT_EQ(inputs::parse_cases(documents.value()).error().message,
                  "cases.yaml:1 (document 1): objectFrom: " + message);
    }
}

TEST(TestCases, ParityCasesCarryTheOperatorsVerdictAndSettings) {
    const auto cases = cases_of(R"(
case: c
operator: {row: 57, test: T/x, verdict: denied, field: spec.router, message: m,
           differs: "newer operator"}
settings: {privilegedAllowed: true}
object: {kind: ModelDeployment}
expect: {verdict: admitted}
)");
    ASSERT_EQ(cases.size(), 1u);
    ASSERT_TRUE(cases[0].operator_verdict.has_value());
    EXPECT_FALSE(cases[0].operator_verdict->allowed);
    EXPECT_EQ(cases[0].operator_verdict->source, "row 57 T/x");
    EXPECT_EQ(cases[0].operator_verdict->differs, "newer operator");
    EXPECT_EQ(cases[0].settings.at("privilegedAllowed"), true);
}

}  // namespace
}  // namespace mdadmit::test
