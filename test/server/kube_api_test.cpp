// The webhook reading the cluster through the Kubernetes API: a cache that lists and then
// watches (events, a broken watch resumed, 410 Gone relisted, a rotated token), a miss
// answered by one shared GET, readiness until the first sync, and a slow or absent API.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <thread>

#include "fake_cluster.hpp"
#include "server_fixture.hpp"

namespace mdadmit::test {
namespace {

namespace json = boost::json;

const std::string& deployments = deployments_path;
const std::string instance_types = "/apis/worker.gpustack.ai/v1alpha1/instancetypes";

std::string deployment(const std::string& name) {
    return R"({"apiVersion": "worker.gpustack.ai/v1", "kind": "ModelDeployment",
    "metadata": {"name": ")" +
           name + R"(", "namespace": "team-a"},
    "spec": {"model": {"name": "m"}, "engine": {"name": "SGLang", "version": "0.5.18"}, "router": {"name": "sglang-gateway"},
             "roles": [{"name": "ranks", "size": 2, "extraArgs": ["--enable-dp-attention", "--dp-size", "2"]}]}})";
}

std::string pod_review(const std::string& name) {
    return json::serialize(json::object{
        {"apiVersion", "admission.k8s.io/v1"},
        {"kind", "AdmissionReview"},
        {"request",
         {{"uid", "pod-1"},
          {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
          {"operation", "CREATE"},
          {"namespace", "team-a"},
          {"object",
           {{"metadata",
             {{"labels",
               {{"app.kubernetes.io/name", "model-deployment"},
                {"app.kubernetes.io/instance", name},
                {"app.kubernetes.io/component", "ranks"},
                {"modeldeployment.gpustack.ai/member-index", "1"}}}}},
            {"spec", {{"containers", json::array{json::object{{"name", "engine"}}}}}}}}}}});
}

class KubeApiTest : public testing::Test {
  protected:
    std::unique_ptr<ServerFixture> start(const std::function<void(server::Config&)>& more = {}) {
        return std::make_unique<ServerFixture>([&](server::Config& c) {
            cluster.connect(c);
            if (more) {
                more(c);
            }
        });
    }
    static json::value mutate(ServerFixture& fixture, const std::string& name,
                              const std::string& target = "/mutate") {
        HttpsClient client(fixture.port(), fixture.client_options());
        EXPECT_TRUE(client.connect());
        const auto response = client.request("POST", target, pod_review(name));
        EXPECT_EQ(response.status, 200) << client.last_error();
        return json::parse(response.body).at("response");
    }
    static bool patched(const json::value& response) {
        return response.as_object().contains("patch");
    }
    static std::string readyz(ServerFixture& fixture) {
        return plain_get(fixture.health_port(), "/readyz").second;
    }

    FakeCluster cluster;
    FakeKubeApi& api = cluster.api;
    const std::string& token_file = cluster.token_file;
};

TEST_F(KubeApiTest, AWatchedModelDeploymentPatchesPodsWithoutAGet) {
    api.put(deployments, deployment("chat"));
    auto fixture = start();
    ASSERT_TRUE(
        fixture->wait_for_metric("mdadmit_cluster_cache_synced{kind=\"ModelDeployment\"} 1"));
    for (int i = 0; i < 3; ++i) {
        EXPECT_TRUE(patched(mutate(*fixture, "chat")));
    }
    EXPECT_EQ(api.gets(), 0);
    EXPECT_EQ(api.lists(deployments), 1);
    EXPECT_EQ(api.lists(instance_types), 1);
    EXPECT_TRUE(fixture->wait_for_metric("mdadmit_cluster_lookups_total{result=\"found\"} 3"));
}

TEST_F(KubeApiTest, WatchEventsReachTheCache) {
    auto fixture = start();
    ASSERT_TRUE(
        fixture->wait_for_metric("mdadmit_cluster_cache_synced{kind=\"ModelDeployment\"} 1"));
    api.put(deployments, deployment("late"));
    ASSERT_TRUE(fixture->wait_for_metric(
        "mdadmit_cluster_cache_updates_total{kind=\"ModelDeployment\",update=\"ADDED\"} 1"));
    EXPECT_TRUE(patched(mutate(*fixture, "late")));
    EXPECT_EQ(api.gets(), 0);
    api.remove(deployments, "team-a", "late");
    ASSERT_TRUE(fixture->wait_for_metric(
        "mdadmit_cluster_cache_updates_total{kind=\"ModelDeployment\",update=\"DELETED\"} 1"));
    const json::value gone = mutate(*fixture, "late");
    EXPECT_EQ(gone.at("warnings").at(0),
              "mdadmit: ModelDeployment team-a/late not found; Pod admitted unchanged");
}

TEST_F(KubeApiTest, ABrokenWatchResumesFromItsVersionAndAnExpiredOneRelists) {
    auto fixture = start();
    ASSERT_TRUE(
        fixture->wait_for_metric("mdadmit_cluster_cache_synced{kind=\"ModelDeployment\"} 1"));
    api.bookmark(deployments);
    api.drop_watches();
    api.put(deployments, deployment("after-drop"));
    ASSERT_TRUE(fixture->wait_for_metric(
        "mdadmit_cluster_cache_updates_total{kind=\"ModelDeployment\",update=\"ADDED\"} 1"));
    EXPECT_EQ(api.lists(deployments), 1);  // resumed, not listed again
    EXPECT_GE(api.watches(deployments), 2);
    // The API server forgets the history: the watch gets 410 and the cache lists again.
    api.forget_history(deployments);
    api.put_unannounced(deployments, deployment("after-gone"));
    api.drop_watches();
    ASSERT_TRUE(fixture->wait_for_metric(
        "mdadmit_cluster_cache_updates_total{kind=\"ModelDeployment\",update=\"list\"} 2"));
    EXPECT_EQ(api.lists(deployments), 2);
    EXPECT_TRUE(patched(mutate(*fixture, "after-gone")));
    EXPECT_EQ(api.gets(), 0);
}

TEST_F(KubeApiTest, AMissIsOneGetThatConcurrentLookupsShare) {
    auto fixture = start();
    ASSERT_TRUE(
        fixture->wait_for_metric("mdadmit_cluster_cache_synced{kind=\"ModelDeployment\"} 1"));
    api.put_unannounced(deployments, deployment("fresh"));
    api.set_delay(std::chrono::milliseconds(300));
    std::vector<std::thread> clients;
    std::atomic<int> patches{0};
    for (int i = 0; i < 6; ++i) {
        clients.emplace_back([&] { patches += patched(mutate(*fixture, "fresh")) ? 1 : 0; });
    }
    for (auto& client : clients) {
        client.join();
    }
    EXPECT_EQ(patches, 6);
    EXPECT_EQ(api.gets(), 1);
}

TEST_F(KubeApiTest, ReadyOnlyOnceTheCacheHasSynced) {
    api.set_delay(std::chrono::milliseconds(800));
    auto fixture = start();
    EXPECT_EQ(readyz(*fixture), "cluster cache not synced\n");
    ASSERT_TRUE(fixture->wait_for_metric("mdadmit_cluster_cache_synced{kind=\"InstanceType\"} 1"));
    ASSERT_TRUE(
        fixture->wait_for_metric("mdadmit_cluster_cache_synced{kind=\"ModelDeployment\"} 1"));
    EXPECT_EQ(readyz(*fixture), "ok\n");
}

TEST_F(KubeApiTest, ARotatedTokenIsReadFromItsFile) {
    api.put(deployments, deployment("chat"));
    api.set_token("token-2");
    auto fixture = start();
    // Refused until the kubelet writes the new token: the list fails, the GET too.
    const json::value refused = mutate(*fixture, "chat");
    EXPECT_FALSE(patched(refused));
    EXPECT_EQ(refused.at("warnings").at(0),
              "mdadmit: ModelDeployment team-a/chat could not be read (the API server answered "
              "401: Unauthorized); Pod admitted unchanged");
    write_file(token_file, "token-2\n");
    ASSERT_TRUE(
        fixture->wait_for_metric("mdadmit_cluster_cache_synced{kind=\"ModelDeployment\"} 1"));
    EXPECT_TRUE(patched(mutate(*fixture, "chat")));
}

TEST_F(KubeApiTest, ASlowApiServerIsCutOffBeforeTheApiserversDeadline) {
    api.put(deployments, deployment("chat"));
    api.set_delay(std::chrono::seconds(3));
    auto fixture = start();
    const auto started = std::chrono::steady_clock::now();
    const json::value response = mutate(*fixture, "chat", "/mutate?timeout=1s");
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(1'000));
    EXPECT_EQ(response.at("allowed"), true);
    EXPECT_NE(std::string(response.at("warnings").at(0).as_string()).find("could not be read"),
              std::string::npos);
    EXPECT_TRUE(fixture->wait_for_metric("mdadmit_cluster_lookups_total{result=\"error\"} 1"));
}

TEST_F(KubeApiTest, AnApiServerThatIsDownFollowsTheFailureMode) {
    auto fixture = start([](server::Config& c) {
        c.kube_port = 1;  // nothing listens there
        c.deny_unreadable_mutations = true;
    });
    const json::value response = mutate(*fixture, "chat");
    EXPECT_EQ(response.at("allowed"), false);
    EXPECT_EQ(response.at("status").at("code"), 503);
    EXPECT_EQ(readyz(*fixture), "cluster cache not synced\n");
}

// The first answer after the cache has synced InstanceTypes; before that, the type is unknown.
json::value validate_when_synced(ServerFixture& fixture, const std::string& object) {
    EXPECT_TRUE(fixture.wait_for_metric("mdadmit_cluster_cache_synced{kind=\"InstanceType\"} 1"));
    HttpsClient client(fixture.port(), fixture.client_options());
    EXPECT_TRUE(client.connect());
    return json::parse(client.request("POST", "/validate", validate_review(object)).body)
        .at("response");
}

TEST_F(KubeApiTest, InstanceTypesWatchedFromTheApiJudgeTheEncodeMatrix) {
    api.put(instance_types, R"({"metadata": {"name": "npu"},
        "status": {"detail": {"manufacturer": "Huawei Ascend"}}})");
    auto fixture = start();
    const json::value response =
        validate_when_synced(*fixture, R"({"metadata": {"name": "mm", "namespace": "team-a"},
        "spec": {"model": {"name": "m"}, "engine": {"name": "vLLM", "version": "0.29.0"}, "router": {"name": "vllm-router"},
                 "roles": [{"name": "e", "kind": "Encode", "instanceType": "npu"},
                           {"name": "p", "kind": "Prefill", "instanceType": "npu"},
                           {"name": "d", "kind": "Decode", "instanceType": "npu"}]}})");
    EXPECT_EQ(response.at("allowed"), false);
    EXPECT_EQ(
        response.at("status").at("details").at("causes").at(0).at("message"),
        "Encode on vllm-router + vLLM is admitted on nvidia and amd, not ascend; use llm-d-router "
        "[encode-matrix]");
}

TEST_F(KubeApiTest, TheInstanceTypesPoolIsReadFromTheApi) {
    api.put(
        instance_types,
        R"({"metadata": {"name": "h20"}, "spec": {"acceleratable": true, "acceleratorGroup": "h20"},
         "status": {"detail": {"manufacturer": "nvidia"}, "accelerator": {"capacity": "8"}}})");
    auto fixture = start();
    const json::value response =
        validate_when_synced(*fixture, R"({"metadata": {"name": "big", "namespace": "team-a"},
        "spec": {"model": {"name": "m"}, "engine": {"name": "vLLM", "version": "0.29.0"},
                 "roles": [{"name": "s", "instanceType": "h20", "resources": {"accelerator": "9"}}]}})");
    EXPECT_EQ(response.at("allowed"), false);
    EXPECT_EQ(response.at("status").at("details").at("causes").at(0).at("message"),
              "role `s` asks for 9 whole accelerators; InstanceType `h20` has 8 in its pool "
              "[instance-type-capacity]");
}

}  // namespace
}  // namespace mdadmit::test
