#pragma once

#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mdadmit/inputs/documents.hpp"
#include "mdadmit/rules/engine.hpp"

namespace mdadmit::inputs {

// What a case expects of one finding. Unset fields match anything.
struct ExpectedFinding {
    std::string rule;
    std::string path;
    std::optional<rules::Severity> severity;
    std::string message_contains;
};

// What the GPUStack operator's own admission answers for a case's object (the parity suite,
// test/cases/operator/): its verdict, where it comes from, and why ours differs when it does.
struct OperatorVerdict {
    bool allowed = true;
    std::string source;   // "row 57 TestValidateModelDeployment/...", or the doc it comes from
    std::string differs;  // empty when our verdict is the operator's
};

// One case of a `mdadmit test` suite: an object (and an optional old object for UPDATE),
// judged, and what must come of it. The format is documented in docs/harness.md.
struct TestCase {
    std::string name;
    std::string source;
    std::size_t document = 0;
    std::size_t line = 0;
    boost::json::value object;
    std::optional<boost::json::value> old_object;
    rules::InstanceTypes instance_types;  // the case's own, added to the suite's
    boost::json::object settings;         // rule-data settings the case is judged with
    std::optional<OperatorVerdict> operator_verdict;
    rules::Operation operation = rules::Operation::create;
    bool expect_allowed = true;
    std::vector<ExpectedFinding> findings;
    bool exact = true;  // no finding beyond those listed
    // A mutation case: the Pod to patch and the exact JSON Patch expected (empty: none).
    std::optional<boost::json::value> pod;
    boost::json::array expected_patch;

    std::string label() const;  // file#document "name"
};

// Reads the cases among `documents` (documents with a `case` field); an Error names the
// file, the document and the field at fault.
rules::Result<std::vector<TestCase>> parse_cases(const std::vector<Document>& documents);

struct CaseOutcome {
    bool passed = true;
    std::string reason;  // one line: what did not match
    std::string diff;    // expected (-) against actual (+), one finding per line
};

CaseOutcome compare(const TestCase& test_case, const rules::Evaluation& evaluation);
// For a mutation case: the patch the webhook computed against the one expected.
CaseOutcome compare_patch(const TestCase& test_case, const boost::json::array& patch);

// "rule@path" for a finding, the form a case may use.
std::string finding_key(const rules::Finding& finding);

}  // namespace mdadmit::inputs
