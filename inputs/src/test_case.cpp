#include "mdadmit/inputs/test_case.hpp"

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <filesystem>

#include "mdadmit/rules/arg_stream.hpp"

namespace mdadmit::inputs {

namespace {

namespace json = boost::json;

struct CaseError {
    std::string field;
    std::string problem;
};

std::string text(const json::value& value, const std::string& field) {
    if (!value.is_string()) {
        throw CaseError{field, "expected a string"};
    }
    return std::string(value.get_string());
}

ExpectedFinding parse_finding(const json::value& value, const std::string& field) {
    ExpectedFinding out;
    if (value.is_string()) {
        // The short form "rule@path".
        const std::string spelled(value.get_string());
        const auto at = spelled.find('@');
        out.rule = spelled.substr(0, at);
        out.path = at == std::string::npos ? std::string() : spelled.substr(at + 1);
        return out;
    }
    if (!value.is_object()) {
        throw CaseError{field, "expected \"rule@path\" or {rule, path, severity, message}"};
    }
    const json::object& object = value.get_object();
    for (const auto& [key, item] : object) {
        if (key == "rule") {
            out.rule = text(item, field + ".rule");
        } else if (key == "path") {
            out.path = text(item, field + ".path");
        } else if (key == "message") {
            out.message_contains = text(item, field + ".message");
        } else if (key == "severity") {
            const std::string severity = text(item, field + ".severity");
            if (severity != "deny" && severity != "warn") {
                throw CaseError{field + ".severity", "expected deny or warn"};
            }
            out.severity = severity == "deny" ? rules::Severity::deny : rules::Severity::warn;
        } else {
            throw CaseError{field + "." + std::string(key),
                            "unknown field (rule, path, severity, message)"};
        }
    }
    if (out.rule.empty()) {
        throw CaseError{field + ".rule", "required"};
    }
    return out;
}

// `FILE#N`: the Nth document (from 1) of a manifest file, FILE relative to the case's file,
// so a manifest shipped elsewhere (examples/) is judged as it is without a copy.
json::value object_from(const std::string& reference, const std::string& case_source) {
    const auto hash = reference.rfind('#');
    const auto number = hash == std::string::npos
                            ? std::nullopt
                            : rules::parse_integer(std::string_view(reference).substr(hash + 1));
    if (!number || *number < 1) {
        throw CaseError{"objectFrom", "expected FILE#N, N the document's position from 1"};
    }
    const std::filesystem::path file =
        std::filesystem::path(case_source).parent_path() / reference.substr(0, hash);
    auto documents = read_documents(file.string());
    if (!documents) {
        throw CaseError{"objectFrom", documents.error().message};
    }
    if (static_cast<std::size_t>(*number) > documents.value().size()) {
        throw CaseError{"objectFrom", file.string() + " has " +
                                          std::to_string(documents.value().size()) + " documents"};
    }
    return documents.value()[static_cast<std::size_t>(*number) - 1].value;
}

OperatorVerdict parse_operator(const json::value& value) {
    if (!value.is_object()) {
        throw CaseError{"operator", "expected {verdict, row, test, doc, field, message, differs}"};
    }
    OperatorVerdict out;
    bool has_verdict = false;
    std::string row;
    for (const auto& [key, item] : value.get_object()) {
        const std::string field = "operator." + std::string(key);
        if (key == "verdict") {
            const std::string verdict = text(item, field);
            if (verdict != "admitted" && verdict != "denied") {
                throw CaseError{field, "expected admitted or denied"};
            }
            out.allowed = verdict == "admitted";
            has_verdict = true;
        } else if (key == "row") {
            if (!item.is_int64()) {
                throw CaseError{field, "expected the row number"};
            }
            row = "row " + std::to_string(item.get_int64());
        } else if (key == "test" || key == "doc") {
            out.source += (out.source.empty() ? "" : " ") + text(item, field);
        } else if (key == "differs") {
            out.differs = text(item, field);
        } else if (key != "field" && key != "message" && key != "note") {
            // field, message and note record what the operator says; they are not compared.
            throw CaseError{field,
                            "unknown field (verdict, row, test, doc, field, message, "
                            "note, differs)"};
        }
    }
    if (!has_verdict) {
        throw CaseError{"operator.verdict", "required: admitted or denied"};
    }
    out.source = row + (row.empty() || out.source.empty() ? "" : " ") + out.source;
    return out;
}

TestCase parse_case(const Document& document) {
    const json::object& object = document.value.get_object();
    TestCase out;
    out.source = document.source;
    out.document = document.index;
    out.line = document.line;
    for (const auto& [key, value] : object) {
        if (key == "case") {
            out.name = text(value, "case");
        } else if (key == "object") {
            out.object = value;
        } else if (key == "objectFrom") {
            if (object.contains("object")) {
                throw CaseError{"objectFrom", "a case has either object or objectFrom"};
            }
            out.object = object_from(text(value, "objectFrom"), document.source);
        } else if (key == "old") {
            out.old_object = value;
            out.operation = rules::Operation::update;
        } else if (key == "pod") {
            out.pod = value;
        } else if (key == "operation") {
            const std::string operation = text(value, "operation");
            if (operation != "CREATE" && operation != "UPDATE") {
                throw CaseError{"operation", "expected CREATE or UPDATE"};
            }
            out.operation =
                operation == "UPDATE" ? rules::Operation::update : rules::Operation::create;
        } else if (key == "instanceTypes") {
            if (!value.is_object()) {
                throw CaseError{"instanceTypes",
                                "expected a map of InstanceType name to manufacturer"};
            }
            for (const auto& [name, manufacturer] : value.get_object()) {
                out.instance_types[std::string(name)].manufacturer =
                    manufacturer.is_null()
                        ? std::string()
                        : text(manufacturer, "instanceTypes." + std::string(name));
            }
        } else if (key == "settings") {
            if (!value.is_object()) {
                throw CaseError{"settings", "expected a map of setting name to true or false"};
            }
            out.settings = value.get_object();
        } else if (key == "operator") {
            out.operator_verdict = parse_operator(value);
        } else if (key == "expect") {
            if (!value.is_object()) {
                throw CaseError{"expect", "expected {verdict, findings, exact}"};
            }
            bool has_verdict = false;
            for (const auto& [expect_key, expect_value] : value.get_object()) {
                if (expect_key == "verdict") {
                    const std::string verdict = text(expect_value, "expect.verdict");
                    if (verdict != "admitted" && verdict != "denied") {
                        throw CaseError{"expect.verdict",
                                        "expected admitted or denied, got \"" + verdict + "\""};
                    }
                    out.expect_allowed = verdict == "admitted";
                    has_verdict = true;
                } else if (expect_key == "findings") {
                    if (!expect_value.is_array()) {
                        throw CaseError{"expect.findings", "expected a list"};
                    }
                    const auto& items = expect_value.get_array();
                    for (std::size_t i = 0; i < items.size(); ++i) {
                        out.findings.push_back(
                            parse_finding(items[i], "expect.findings[" + std::to_string(i) + "]"));
                    }
                } else if (expect_key == "patch") {
                    if (!expect_value.is_array()) {
                        throw CaseError{"expect.patch",
                                        "expected a JSON Patch: a list of operations"};
                    }
                    out.expected_patch = expect_value.get_array();
                } else if (expect_key == "exact") {
                    if (!expect_value.is_bool()) {
                        throw CaseError{"expect.exact", "expected true or false"};
                    }
                    out.exact = expect_value.get_bool();
                } else {
                    throw CaseError{"expect." + std::string(expect_key),
                                    "unknown field (verdict, findings, exact)"};
                }
            }
            if (!has_verdict && !out.pod) {
                throw CaseError{"expect.verdict", "required: admitted or denied"};
            }
        } else {
            throw CaseError{std::string(key),
                            "unknown field (case, object, objectFrom, old, operation, "
                            "instanceTypes, settings, operator, expect)"};
        }
    }
    if (out.name.empty()) {
        throw CaseError{"case", "required: a name for the case"};
    }
    if (out.object.is_null()) {
        throw CaseError{"object", "required: the ModelDeployment to judge"};
    }
    if (!object.contains("expect")) {
        throw CaseError{"expect", "required: {verdict, findings}"};
    }
    if (const auto& theirs = out.operator_verdict) {
        // A parity case either agrees with the operator or says why it does not.
        const bool agrees = theirs->allowed == out.expect_allowed;
        if (agrees && !theirs->differs.empty()) {
            throw CaseError{"operator.differs", "given, but expect.verdict is the operator's"};
        }
        if (!agrees && theirs->differs.empty()) {
            throw CaseError{"operator.differs",
                            "required: expect.verdict is not the operator's; say why"};
        }
    }
    return out;
}

bool matches(const ExpectedFinding& expected, const rules::Finding& actual) {
    return expected.rule == actual.rule &&
           (expected.path.empty() || expected.path == actual.path) &&
           (!expected.severity || *expected.severity == actual.severity) &&
           actual.message.find(expected.message_contains) != std::string::npos;
}

std::string describe(const ExpectedFinding& expected) {
    std::string out = expected.rule + "@" + (expected.path.empty() ? "*" : expected.path);
    if (expected.severity) {
        out += " (" + std::string(rules::to_string(*expected.severity)) + ")";
    }
    if (!expected.message_contains.empty()) {
        out += " message containing \"" + expected.message_contains + "\"";
    }
    return out;
}

}  // namespace

std::string TestCase::label() const {
    return source + "#" + std::to_string(document) + " \"" + name + "\"";
}

std::string finding_key(const rules::Finding& finding) {
    return std::string(finding.rule) + "@" + finding.path;
}

rules::Result<std::vector<TestCase>> parse_cases(const std::vector<Document>& documents) {
    std::vector<TestCase> out;
    for (const auto& document : documents) {
        if (!document.value.is_object() || !document.value.get_object().contains("case")) {
            continue;
        }
        try {
            out.push_back(parse_case(document));
        } catch (const CaseError& e) {
            return rules::Error{document.source + ":" + std::to_string(document.line) +
                                " (document " + std::to_string(document.index) + "): " + e.field +
                                ": " + e.problem};
        }
    }
    return out;
}

CaseOutcome compare_patch(const TestCase& test_case, const json::array& patch) {
    CaseOutcome out;
    if (patch == test_case.expected_patch) {
        return out;
    }
    out.passed = false;
    out.reason = "the patch differs from the one expected";
    for (const auto& operation : test_case.expected_patch) {
        if (std::find(patch.begin(), patch.end(), operation) == patch.end()) {
            out.diff += "- " + json::serialize(operation) + "\n";
        }
    }
    for (const auto& operation : patch) {
        if (std::find(test_case.expected_patch.begin(), test_case.expected_patch.end(),
                      operation) == test_case.expected_patch.end()) {
            out.diff += "+ " + json::serialize(operation) + "\n";
        }
    }
    if (out.diff.empty()) {
        out.diff = "  the same operations in another order\n";
    }
    return out;
}

CaseOutcome compare(const TestCase& test_case, const rules::Evaluation& evaluation) {
    CaseOutcome out;
    std::vector<bool> used(evaluation.findings.size(), false);
    std::vector<std::string> missing;
    for (const auto& expected : test_case.findings) {
        bool found = false;
        for (std::size_t i = 0; i < evaluation.findings.size() && !found; ++i) {
            if (!used[i] && matches(expected, evaluation.findings[i])) {
                used[i] = found = true;
            }
        }
        if (!found) {
            missing.push_back(describe(expected));
        }
    }
    std::vector<std::string> unexpected;
    for (std::size_t i = 0; i < evaluation.findings.size(); ++i) {
        if (!used[i] && test_case.exact) {
            const auto& f = evaluation.findings[i];
            unexpected.push_back(finding_key(f) + " (" + std::string(rules::to_string(f.severity)) +
                                 ") " + f.message);
        }
    }
    const bool verdict_ok = evaluation.allowed() == test_case.expect_allowed;
    out.passed = verdict_ok && missing.empty() && unexpected.empty();
    if (out.passed) {
        return out;
    }
    const auto verdict = [](bool allowed) {
        return allowed ? std::string("admitted") : std::string("denied");
    };
    if (!verdict_ok) {
        out.reason = "expected " + verdict(test_case.expect_allowed) + ", got " +
                     verdict(evaluation.allowed());
    } else {
        out.reason = std::to_string(missing.size()) + " expected finding(s) missing, " +
                     std::to_string(unexpected.size()) + " unexpected";
    }
    for (const auto& line : missing) {
        out.diff += "- " + line + "\n";
    }
    for (const auto& line : unexpected) {
        out.diff += "+ " + line + "\n";
    }
    return out;
}

}  // namespace mdadmit::inputs
