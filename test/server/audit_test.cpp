// The server's periodic audit of the ModelDeployments it watches: its gauges are what
// `mdadmit audit` reports on the same objects, and they follow the objects as they change.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <map>
#include <sstream>

#include "command.hpp"
#include "fake_cluster.hpp"
#include "server_fixture.hpp"

namespace mdadmit::test {
namespace {

namespace json = boost::json;

const std::string stored_file =
    std::string(MDADMIT_SOURCE_DIR) + "/test/data/stored-modeldeployments.json";

// The gauge samples `mdadmit audit --output json` implies for the stored objects.
std::map<std::string, int> expected_by_the_cli() {
    const json::value report =
        json::parse(run_command(std::string("'") + MDADMIT_CLI_BINARY + "' audit --output json '" +
                                stored_file + "'")
                        .out);
    std::map<std::string, int> samples;
    for (const auto& object : report.at("objects").as_array()) {
        for (const auto& finding : object.at("findings").as_array()) {
            ++samples["mdadmit_audit_violations{rule=\"" +
                      std::string(finding.at("rule").as_string()) + "\",severity=\"" +
                      std::string(finding.at("severity").as_string()) + "\",enforced=\"" +
                      (finding.at("enforced").as_bool() ? "true" : "false") + "\"}"];
        }
    }
    return samples;
}

// The mdadmit_audit_violations samples of an exposition.
std::map<std::string, int> audit_samples(const std::string& exposition) {
    std::map<std::string, int> samples;
    std::istringstream lines(exposition);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("mdadmit_audit_violations{", 0) == 0) {
            const auto space = line.rfind(' ');
            samples[line.substr(0, space)] = std::stoi(line.substr(space + 1));
        }
    }
    return samples;
}

class AuditTest : public testing::Test {
  protected:
    void SetUp() override { cluster.store_test_deployments(); }
    std::unique_ptr<ServerFixture> start(const std::string& enforce = "") {
        return std::make_unique<ServerFixture>([&](server::Config& c) {
            cluster.connect(c);
            c.audit_interval = std::chrono::milliseconds(200);
            if (!enforce.empty()) {
                c.enforcement = rules::parse_enforcement(enforce).value();
            }
        });
    }

    FakeCluster cluster;
};

TEST_F(AuditTest, GaugesMatchTheCliOnTheSameObjects) {
    auto fixture = start();
    ASSERT_TRUE(fixture->wait_for_metric("mdadmit_audit_objects 3\n"));
    const auto expected = expected_by_the_cli();
    ASSERT_EQ(expected.size(), 3u);  // two deny rules on one object, one warning on another
    EXPECT_EQ(audit_samples(fixture->metrics().exposition()), expected);
    EXPECT_TRUE(fixture->wait_for_metric("mdadmit_audit_refused_objects 1\n"));
}

TEST_F(AuditTest, GaugesFollowTheObjectsAndFixedViolationsGoToZero) {
    auto fixture = start();
    ASSERT_TRUE(fixture->wait_for_metric("mdadmit_audit_refused_objects 1\n"));
    cluster.api.put(deployments_path,
                    R"({"apiVersion": "worker.gpustack.ai/v1", "kind": "ModelDeployment",
        "metadata": {"name": "typo", "namespace": "team-b"},
        "spec": {"model": {"name": "qwen"}, "engine": {"name": "vLLM", "version": "0.11.0"},
                 "router": {"name": "vllm-router", "extraArgs": ["--policy", "round_robin"]},
                 "roles": [{"name": "serve", "replicas": 2}]}})");
    EXPECT_TRUE(fixture->wait_for_metric("mdadmit_audit_refused_objects 0\n"));
    EXPECT_TRUE(
        fixture->wait_for_metric("mdadmit_audit_violations{rule=\"router-policy-value\",severity="
                                 "\"deny\",enforced=\"true\"} "
                                 "0\n"));
    cluster.api.remove(deployments_path, "team-b", "dp");
    EXPECT_TRUE(fixture->wait_for_metric("mdadmit_audit_objects 2\n"));
}

TEST_F(AuditTest, StagedRulesShowAsNotEnforced) {
    auto fixture = start("*=warn");
    ASSERT_TRUE(fixture->wait_for_metric("mdadmit_audit_objects 3\n"));
    EXPECT_TRUE(
        fixture->wait_for_metric("mdadmit_audit_violations{rule=\"router-policy-value\",severity="
                                 "\"warn\",enforced=\"false\"} "
                                 "1\n"));
    EXPECT_TRUE(fixture->wait_for_metric("mdadmit_audit_refused_objects 0\n"));
}

}  // namespace
}  // namespace mdadmit::test
