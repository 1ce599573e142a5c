// The machine-readable reports of `check` and `audit`, as a pipeline reads them: the JSON
// report against its published schema (docs/report.schema.json), SARIF against the OASIS
// SARIF 2.1.0 schema that code-scanning tools validate with (test/data/sarif-schema-2.1.0.json:
// oasis-tcs/sarif-spec, Documents/CommitteeSpecifications/2.1.0/, commit 3682e9e).
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <fstream>
#include <sstream>
#include <string>
#include <valijson/adapters/boost_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "command.hpp"

namespace mdadmit::test {
namespace {

namespace json = boost::json;

const std::string source_dir = MDADMIT_SOURCE_DIR;

json::value read_json(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return json::parse(text.str());
}

// What `mdadmit ARGUMENTS` writes to stdout, run from the source directory.
std::string mdadmit_output(const std::string& arguments) {
    return run_command("cd '" + source_dir + "' && '" + std::string(MDADMIT_BINARY) + "' " +
                       arguments)
        .out;
}

// Every violation of `schema_file` in `document`, one per line; empty when it validates.
std::string violations(const json::value& document, const std::string& schema_file) {
    const json::value schema_document = read_json(schema_file);
    valijson::Schema schema;
    valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
    parser.populateSchema(valijson::adapters::BoostJsonAdapter(schema_document), schema);
    valijson::Validator validator;
    valijson::ValidationResults results;
    validator.validate(schema, valijson::adapters::BoostJsonAdapter(document), &results);
    std::string out;
    valijson::ValidationResults::Error error;
    while (results.popError(error)) {
        std::string where;
        for (const auto& step : error.context) {
            where += step;
        }
        out += where + ": " + error.description + "\n";
    }
    return out;
}

const std::string stored = "test/data/stored-modeldeployments.json";

TEST(Reports, AuditJsonValidatesAndNamesEachViolation) {
    const json::value report = json::parse(mdadmit_output("audit --output json " + stored));
    EXPECT_EQ(violations(report, source_dir + "/docs/report.schema.json"), "");
    EXPECT_EQ(report.at("summary"), json::parse(R"({"objects": 3, "denied": 1, "warnings": 1})"));
    const json::value& typo = report.at("objects").at(1);
    EXPECT_EQ(typo.at("name"), "team-b/typo");
    EXPECT_EQ(typo.at("item"), 2);
    EXPECT_EQ(typo.at("findings").at(0).at("rule"), "router-policy-value");
    EXPECT_EQ(typo.at("findings").at(0).at("path"), "spec.router.extraArgs[1]");
    EXPECT_EQ(typo.at("findings").at(0).at("enforced"), true);
}

TEST(Reports, StagedFindingsAreMarkedInJson) {
    const json::value report =
        json::parse(mdadmit_output("audit --enforce '*=warn' --output json " + stored));
    EXPECT_EQ(violations(report, source_dir + "/docs/report.schema.json"), "");
    EXPECT_EQ(report.at("summary").at("denied"), 0);
    const json::value& finding = report.at("objects").at(1).at("findings").at(0);
    EXPECT_EQ(finding.at("severity"), "warn");
    EXPECT_EQ(finding.at("enforced"), false);
}

TEST(Reports, SarifValidatesAgainstTheOasisSchema) {
    for (const std::string& arguments :
         {"audit --output sarif " + stored, std::string("check --output sarif examples"),
          "audit --enforce '*=warn' --output sarif - < " + stored}) {
        const json::value report = json::parse(mdadmit_output(arguments));
        EXPECT_EQ(violations(report, source_dir + "/test/data/sarif-schema-2.1.0.json"), "")
            << arguments;
    }
    json::value report = json::parse(mdadmit_output("audit --output sarif " + stored));
    // The schema does catch what a code-scanning upload would refuse.
    json::value broken = report;
    broken.at("runs").at(0).at("results").at(0).as_object()["level"] = "fatal";
    EXPECT_NE(violations(broken, source_dir + "/test/data/sarif-schema-2.1.0.json"), "");
    const json::array& results = report.at("runs").at(0).at("results").as_array();
    ASSERT_EQ(results.size(), 3u);
    EXPECT_EQ(results[0].at("ruleId"), "router-policy-value");
    EXPECT_EQ(results[0].at("level"), "error");
    EXPECT_EQ(results[0].at("message").at("text"),
              "team-b/typo: spec.router.extraArgs[1]: unknown policy `round-robin` for "
              "vllm-router; did you mean `round_robin`?");
    EXPECT_EQ(results[0].at("locations").at(0).at("physicalLocation"),
              json::parse(R"({"artifactLocation": {"uri": ")" + stored +
                          R"("}, "region": {"startLine": 1}})"));
    const auto rule_index = results[0].at("ruleIndex").to_number<std::size_t>();
    EXPECT_EQ(report.at("runs").at(0).at("tool").at("driver").at("rules").at(rule_index).at("id"),
              "router-policy-value");
    EXPECT_EQ(results[2].at("level"), "warning");

    // Objects read through kubectl are located by name only: there is no file to point at.
    const json::value from_cluster = json::parse(mdadmit_output(
        "audit --output sarif --kubectl test/data/fake-kubectl -A --context staging"));
    const json::value& location =
        from_cluster.at("runs").at(0).at("results").at(0).at("locations").at(0);
    EXPECT_FALSE(location.as_object().contains("physicalLocation"));
    EXPECT_EQ(location.at("logicalLocations").at(0).at("fullyQualifiedName"),
              "team-b/typo/spec.router.extraArgs[1]");
    // Under *=warn every rule's default level is a warning.
    const json::value staged =
        json::parse(mdadmit_output("audit --enforce '*=warn' --output sarif " + stored));
    EXPECT_EQ(staged.at_pointer("/runs/0/tool/driver/rules/2/defaultConfiguration/level"),
              "warning");
}

}  // namespace
}  // namespace mdadmit::test
