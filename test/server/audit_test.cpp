// The server's periodic audit of the ModelDeployments it watches: its gauges are what
// `mdadmit audit` reports on the same objects, and they follow the objects as they change.
#include <gtest/gtest.h>

#include <array>
#include <boost/json.hpp>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "fake_kube_api.hpp"
#include "server_fixture.hpp"

namespace mdadmit::test {
namespace {

namespace json = boost::json;

const std::string deployments = "/apis/worker.gpustack.ai/v1/modeldeployments";
const std::string stored_file =
    std::string(MDADMIT_SOURCE_DIR) + "/test/data/stored-modeldeployments.json";

std::string command_output(const std::string& command) {
    const std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
    std::string out;
    std::array<char, 4096> chunk{};
    for (std::size_t n; pipe && (n = std::fread(chunk.data(), 1, chunk.size(), pipe.get())) > 0;) {
        out.append(chunk.data(), n);
    }
    return out;
}

// The gauge samples `mdadmit audit --output json` implies for the stored objects.
std::map<std::string, int> expected_by_the_cli() {
    const json::value report = json::parse(command_output(
        std::string("'") + MDADMIT_CLI_BINARY + "' audit --output json '" + stored_file + "'"));
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
    void SetUp() override {
        std::ifstream in(stored_file);
        std::ostringstream text;
        text << in.rdbuf();
        const json::value stored = json::parse(text.str());
        for (const auto& item : stored.at("items").as_array()) {
            api.put(deployments, json::serialize(item));
        }
        write_file(token_file, "token-1\n");
    }
    std::unique_ptr<ServerFixture> start(const std::string& enforce = "") {
        return std::make_unique<ServerFixture>([&](server::Config& c) {
            c.kube_host = "127.0.0.1";
            c.kube_port = api.port();
            c.kube_ca_file = api.ca_file();
            c.kube_server_name = "localhost";
            c.kube_token_file = token_file;
            c.audit_interval = std::chrono::milliseconds(200);
            if (!enforce.empty()) {
                c.enforcement = rules::parse_enforcement(enforce).value();
            }
        });
    }

    FakeKubeApi api{"token-1"};
    std::string token_file =
        testing::TempDir() + "/mdadmit-audit-token-" + std::to_string(::getpid());
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
    api.put(deployments, R"({"apiVersion": "worker.gpustack.ai/v1", "kind": "ModelDeployment",
        "metadata": {"name": "typo", "namespace": "team-b"},
        "spec": {"model": {"name": "qwen"}, "engine": {"name": "vLLM", "version": "0.11.0"},
                 "router": {"name": "vllm-router", "extraArgs": ["--policy", "round_robin"]},
                 "roles": [{"name": "serve", "replicas": 2}]}})");
    EXPECT_TRUE(fixture->wait_for_metric("mdadmit_audit_refused_objects 0\n"));
    EXPECT_TRUE(
        fixture->wait_for_metric("mdadmit_audit_violations{rule=\"router-policy-value\",severity="
                                 "\"deny\",enforced=\"true\"} "
                                 "0\n"));
    api.remove(deployments, "team-b", "dp");
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
