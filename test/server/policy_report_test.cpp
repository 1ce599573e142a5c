// PolicyReports from the periodic audit (--policy-reports): one per namespace, created,
// updated and emptied as the stored ModelDeployments change, and written by one replica only,
// the holder of a Lease, which another takes over when the holder is gone.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <thread>

#include "fake_cluster.hpp"
#include "server_fixture.hpp"

namespace mdadmit::test {
namespace {

namespace json = boost::json;

const std::string reports = "/apis/wgpolicyk8s.io/v1alpha2/policyreports";
const std::string leases = "/apis/coordination.k8s.io/v1/leases";

const std::string fixed_typo = R"({"apiVersion": "worker.gpustack.ai/v1", "kind": "ModelDeployment",
    "metadata": {"name": "typo", "namespace": "team-b", "uid": "u-typo"},
    "spec": {"model": {"name": "qwen"}, "engine": {"name": "vLLM", "version": "0.11.0"},
             "router": {"name": "vllm-router", "extraArgs": ["--policy", "round_robin"]},
             "roles": [{"name": "serve", "replicas": 2}]}})";

class PolicyReportTest : public testing::Test {
  protected:
    void SetUp() override { cluster.store_test_deployments(); }
    std::unique_ptr<ServerFixture> start(const std::string& identity) {
        return std::make_unique<ServerFixture>([&](server::Config& c) {
            cluster.connect(c);
            c.audit_interval = std::chrono::milliseconds(200);
            c.policy_reports = true;
            c.leader_identity = identity;
            // Long enough that a loaded machine's pauses do not hand the Lease over.
            c.lease_duration = std::chrono::seconds(3);
        });
    }
    json::value lease() {
        const auto text = api.object(leases, "mdadmit-system", "mdadmit-policy-reports");
        return text ? json::parse(*text) : json::value();
    }
    // The report of a namespace once `ready` holds for it, within `timeout`.
    json::value report_when(const std::string& namespace_name,
                            const std::function<bool(const json::value&)>& ready,
                            std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
        json::value last;
        for (auto until = std::chrono::steady_clock::now() + timeout;
             std::chrono::steady_clock::now() < until;) {
            if (const auto text = api.object(reports, namespace_name, "mdadmit")) {
                last = json::parse(*text);
                if (ready(last)) {
                    return last;
                }
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        ADD_FAILURE() << "report of " << namespace_name
                      << " never as expected; last: " << json::serialize(last);
        return last;
    }
    static std::function<bool(const json::value&)> summary_is(const char* summary) {
        return [expected = json::parse(summary)](const json::value& report) {
            return report.at("summary") == expected;
        };
    }

    FakeCluster cluster;
    FakeKubeApi& api = cluster.api;
};

TEST_F(PolicyReportTest, OnePerNamespaceCreatedUpdatedAndEmptied) {
    auto fixture = start("replica-a");
    const json::value team_b = report_when(
        "team-b", summary_is(R"({"pass": 0, "fail": 2, "warn": 1, "error": 0, "skip": 0})"));
    const json::value& first = team_b.at("results").at(0);
    EXPECT_EQ(first.at("rule"), "router-policy-value");
    EXPECT_EQ(first.at("result"), "fail");
    EXPECT_EQ(first.at("policy"), "mdadmit");
    EXPECT_EQ(first.at("properties").at("field"), "spec.router.extraArgs[1]");
    EXPECT_EQ(first.at("resources").at(0),
              json::parse(R"({"apiVersion": "worker.gpustack.ai/v1", "kind": "ModelDeployment",
                              "namespace": "team-b", "name": "typo"})"));
    EXPECT_EQ(team_b.at("results").at(2).at("result"), "warn");
    const json::value team_a = report_when(
        "team-a", summary_is(R"({"pass": 1, "fail": 0, "warn": 0, "error": 0, "skip": 0})"));
    EXPECT_TRUE(team_a.at("results").as_array().empty());

    // Fixed: updated in place.
    api.put(deployments_path, fixed_typo);
    report_when("team-b",
                summary_is(R"({"pass": 1, "fail": 0, "warn": 1, "error": 0, "skip": 0})"));
    // Unchanged objects: the report is not rewritten at every audit.
    const auto version = [&] {
        return json::parse(*api.object(reports, "team-b", "mdadmit"))
            .at_pointer("/metadata/resourceVersion");
    };
    const json::value before = version();
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    EXPECT_EQ(version(), before);
    // Every ModelDeployment of the namespace gone: the report is emptied.
    api.remove(deployments_path, "team-b", "typo");
    api.remove(deployments_path, "team-b", "dp");
    const json::value emptied = report_when(
        "team-b", summary_is(R"({"pass": 0, "fail": 0, "warn": 0, "error": 0, "skip": 0})"));
    EXPECT_TRUE(emptied.at("results").as_array().empty());
}

TEST_F(PolicyReportTest, OneReplicaWritesAndAnotherTakesOverWhenItIsGone) {
    auto first = start("replica-a");
    report_when("team-b", [](const json::value&) { return true; });
    auto second = start("replica-b");
    // The second replica audits too, but while the first renews the Lease it never takes it
    // (so it never writes): the Lease keeps its holder and has no transition.
    api.put(deployments_path, fixed_typo);
    report_when("team-b",
                summary_is(R"({"pass": 1, "fail": 0, "warn": 1, "error": 0, "skip": 0})"));
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    EXPECT_EQ(lease().at_pointer("/spec/holderIdentity"), "replica-a");
    EXPECT_EQ(lease().at_pointer("/spec/leaseTransitions"), 0);
    // The holder stops; once its Lease has lapsed the other replica takes over and writes.
    first.reset();
    api.remove(deployments_path, "team-b", "dp");
    report_when("team-b", summary_is(R"({"pass": 1, "fail": 0, "warn": 0, "error": 0, "skip": 0})"),
                std::chrono::seconds(15));
    EXPECT_EQ(lease().at_pointer("/spec/holderIdentity"), "replica-b");
    EXPECT_EQ(lease().at_pointer("/spec/leaseTransitions"), 1);
}

// A replica shutting down gives the Lease up: the other takes it at its next audit, long before
// the Lease would have lapsed.
TEST_F(PolicyReportTest, AReplicaShuttingDownHandsTheLeaseOverAtOnce) {
    auto first = start("replica-a");
    report_when("team-b", [](const json::value&) { return true; });
    auto second = start("replica-b");
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ASSERT_EQ(lease().at_pointer("/spec/holderIdentity"), "replica-a");
    const auto shutdown = std::chrono::steady_clock::now();
    first->server().begin_shutdown();
    while (lease().at_pointer("/spec/holderIdentity") != "replica-b" &&
           std::chrono::steady_clock::now() - shutdown < std::chrono::seconds(10)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_EQ(lease().at_pointer("/spec/holderIdentity"), "replica-b");
    // Well within the 3 s the Lease would have lasted unrenewed.
    EXPECT_LT(std::chrono::steady_clock::now() - shutdown, std::chrono::seconds(2));
}

// Reports left from an earlier run, or by a replica gone since, are adopted: one whose
// namespace has no ModelDeployment left is emptied.
TEST_F(PolicyReportTest, AReportLeftFromAnEarlierRunIsEmptied) {
    api.put(reports, R"({"apiVersion": "wgpolicyk8s.io/v1alpha2", "kind": "PolicyReport",
        "metadata": {"name": "mdadmit", "namespace": "team-gone",
                     "labels": {"app.kubernetes.io/managed-by": "mdadmit"}},
        "summary": {"pass": 0, "fail": 1, "warn": 0, "error": 0, "skip": 0},
        "results": [{"policy": "mdadmit", "rule": "parallelism", "result": "fail"}]})");
    auto fixture = start("replica-a");
    const json::value emptied = report_when(
        "team-gone", summary_is(R"({"pass": 0, "fail": 0, "warn": 0, "error": 0, "skip": 0})"));
    EXPECT_TRUE(emptied.at("results").as_array().empty());
}

TEST(PolicyReportSettings, NeedTheKubernetesApi) {
    server::Config config;
    config.cert_file = "unused";
    config.policy_reports = true;
    config.cluster_files =
        std::string(MDADMIT_SOURCE_DIR) + "/test/data/stored-modeldeployments.json";
    const server::Log log("error", false);
    const auto webhook = server::Webhook::create(config, log);
    ASSERT_FALSE(webhook.ok());
    EXPECT_EQ(webhook.error().message,
              "--policy-reports=on needs the Kubernetes API (not --cluster-files) and an "
              "--audit-interval");
}

}  // namespace
}  // namespace mdadmit::test
