// What the project publishes stays in step with the code: the rule table in rules/README.md
// and the CRD in manifests/crd/.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <fstream>
#include <sstream>

#include "mdadmit/inputs/crd.hpp"
#include "mdadmit/inputs/documents.hpp"
#include "mdadmit/inputs/rule_catalog.hpp"
#include "mdadmit/rules/json_input.hpp"
#include "mdadmit/rules/rule_data.hpp"
#include "mdadmit/rules/schema_check.hpp"

namespace mdadmit::test {
namespace {

std::string read_source(const std::string& relative) {
    std::ifstream in(std::string(MDADMIT_SOURCE_DIR) + "/" + relative);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

TEST(Docs, RulesReadmeCarriesTheGeneratedRuleTable) {
    const std::string readme = read_source("rules/README.md");
    const std::string begin = "<!-- rule-table:begin -->\n";
    const std::string end = "<!-- rule-table:end -->";
    const auto from = readme.find(begin);
    const auto to = readme.find(end);
    ASSERT_NE(from, std::string::npos);
    ASSERT_NE(to, std::string::npos);
    EXPECT_EQ(readme.substr(from + begin.size(), to - from - begin.size()),
              inputs::rule_table_markdown(rules::embedded_rule_data()))
        << "regenerate the table with: build/cli/mdadmit rules --markdown";
}

TEST(Crd, CommittedCrdIsTheOneGeneratedFromTheSchema) {
    const auto schema = rules::parse_json(rules::embedded_schema_json()).value();
    EXPECT_EQ(read_source("manifests/crd/modeldeployment.yaml"), inputs::crd_yaml(schema))
        << "regenerate with: build/cli/mdadmit-gen-crd > manifests/crd/modeldeployment.yaml";
    const auto documents = inputs::read_documents(std::string(MDADMIT_SOURCE_DIR) +
                                                  "/manifests/crd/modeldeployment.yaml");
    ASSERT_TRUE(documents.ok()) << documents.error().message;
    const auto& versions = documents.value().at(0).value.at("spec").at("versions").as_array();
    ASSERT_EQ(versions.size(), 2u);
    for (const auto& version : versions) {
        EXPECT_EQ(version.at("schema").at("openAPIV3Schema"), schema) << version.at("name");
    }
}

TEST(Crd, BuiltInSchemaMatchesTheSourceFile) {
    EXPECT_EQ(read_source("rules/data/modeldeployment.schema.json"), rules::embedded_schema_json());
    EXPECT_EQ(read_source("rules/data/rules.json"), rules::embedded_rule_data_json());
}

}  // namespace
}  // namespace mdadmit::test
