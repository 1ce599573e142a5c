// The webhook reading the cluster through the Kubernetes API: a fake API server over TLS
// with a bearer token check, found, missing, refused, slow and down.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "fake_kube_api.hpp"
#include "server_fixture.hpp"

namespace mdadmit::test {
namespace {

namespace json = boost::json;

const std::string deployment_path =
    "/apis/worker.gpustack.ai/v1/namespaces/team-a/modeldeployments/chat";
const std::string instance_types_path = "/apis/worker.gpustack.ai/v1alpha1/instancetypes";

const std::string chat = R"({"apiVersion": "worker.gpustack.ai/v1", "kind": "ModelDeployment",
    "metadata": {"name": "chat", "namespace": "team-a"},
    "spec": {"model": {"name": "m"}, "engine": {"name": "SGLang", "version": "0.5.18"}, "router": {"name": "sglang-gateway"},
             "roles": [{"name": "ranks", "size": 2, "extraArgs": ["--enable-dp-attention", "--dp-size", "2"]}]}})";

std::string pod_review(const std::string& deployment) {
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
                {"app.kubernetes.io/instance", deployment},
                {"app.kubernetes.io/component", "ranks"},
                {"modeldeployment.gpustack.ai/member-index", "1"}}}}},
            {"spec", {{"containers", json::array{json::object{{"name", "engine"}}}}}}}}}}});
}

class KubeApiTest : public testing::Test {
  protected:
    std::unique_ptr<ServerFixture> start(const std::function<void(server::Config&)>& more = {}) {
        write_file(token_file, "token-1\n");
        return std::make_unique<ServerFixture>([&](server::Config& c) {
            c.kube_host = "127.0.0.1";
            c.kube_port = api.port();
            c.kube_ca_file = api.ca_file();
            c.kube_server_name = "localhost";
            c.kube_token_file = token_file;
            c.kube_cache_ttl = std::chrono::seconds(60);
            if (more) {
                more(c);
            }
        });
    }
    json::value mutate(ServerFixture& fixture, const std::string& deployment,
                       const std::string& target = "/mutate") {
        HttpsClient client(fixture.port(), fixture.client_options());
        EXPECT_TRUE(client.connect());
        const auto response = client.request("POST", target, pod_review(deployment));
        EXPECT_EQ(response.status, 200) << client.last_error();
        return json::parse(response.body).at("response");
    }

    FakeKubeApi api{"token-1"};
    std::string token_file =
        testing::TempDir() + "/mdadmit-kube-token-" + std::to_string(::getpid());
};

TEST_F(KubeApiTest, AFoundModelDeploymentIsReadOnceAndPatchesThePod) {
    api.serve(deployment_path, chat);
    auto fixture = start();
    for (int i = 0; i < 3; ++i) {
        const json::value response = mutate(*fixture, "chat");
        EXPECT_EQ(response.at("allowed"), true);
        EXPECT_EQ(response.at("patchType"), "JSONPatch");
    }
    EXPECT_EQ(api.requests(deployment_path), 1);  // then from the cache
    EXPECT_TRUE(fixture->wait_for_metric("mdadmit_cluster_lookups_total{result=\"found\"} 3"));
}

TEST_F(KubeApiTest, AMissingModelDeploymentAdmitsThePodUnchangedWithAWarning) {
    auto fixture = start();
    const json::value response = mutate(*fixture, "gone");
    EXPECT_EQ(response.at("allowed"), true);
    EXPECT_FALSE(response.as_object().contains("patch"));
    EXPECT_EQ(response.at("warnings").at(0),
              "mdadmit: ModelDeployment team-a/gone not found; Pod admitted unchanged");
    EXPECT_TRUE(fixture->wait_for_metric("mdadmit_cluster_lookups_total{result=\"not_found\"} 1"));
}

TEST_F(KubeApiTest, ARotatedTokenIsReadFromItsFile) {
    api.serve(deployment_path, chat);
    api.set_token("token-2");
    auto fixture = start();
    const json::value refused = mutate(*fixture, "chat");
    EXPECT_EQ(refused.at("allowed"), true);
    EXPECT_EQ(refused.at("warnings").at(0),
              "mdadmit: ModelDeployment team-a/chat could not be read (the API server answered "
              "401: Unauthorized); "
              "Pod admitted unchanged");
    write_file(token_file, "token-2\n");  // the kubelet rotates the projected token
    EXPECT_EQ(mutate(*fixture, "chat").at("patchType"), "JSONPatch");
}

TEST_F(KubeApiTest, ASlowApiServerIsCutOffBeforeTheApiserversDeadline) {
    api.serve(deployment_path, chat);
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
}

TEST_F(KubeApiTest, InstanceTypesListedFromTheApiJudgeTheEncodeMatrix) {
    api.serve(instance_types_path, R"({"kind": "InstanceTypeList", "items": [
        {"metadata": {"name": "npu"}, "status": {"detail": {"manufacturer": "Huawei Ascend"}}}]})");
    auto fixture = start();
    const std::string epd = R"({"metadata": {"name": "mm", "namespace": "team-a"},
        "spec": {"model": {"name": "m"}, "engine": {"name": "vLLM", "version": "0.29.0"}, "router": {"name": "vllm-router"},
                 "roles": [{"name": "e", "kind": "Encode", "instanceType": "npu"},
                           {"name": "p", "kind": "Prefill", "instanceType": "npu"},
                           {"name": "d", "kind": "Decode", "instanceType": "npu"}]}})";
    HttpsClient client(fixture->port(), fixture->client_options());
    ASSERT_TRUE(client.connect());
    // The first listing runs in the background right after start.
    json::value response;
    for (int i = 0; i < 100; ++i) {
        response = json::parse(client.request("POST", "/validate", validate_review(epd)).body)
                       .at("response");
        if (!response.at("allowed").as_bool()) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_EQ(response.at("allowed"), false);
    EXPECT_EQ(
        response.at("status").at("details").at("causes").at(0).at("message"),
        "Encode on vllm-router + vLLM is admitted on nvidia and amd, not ascend; use llm-d-router "
        "[encode-matrix]");
}

TEST_F(KubeApiTest, TheInstanceTypesPoolIsReadFromTheApi) {
    api.serve(instance_types_path, R"({"kind": "InstanceTypeList", "items": [
        {"metadata": {"name": "h20"}, "spec": {"acceleratable": true, "acceleratorGroup": "h20"},
         "status": {"detail": {"manufacturer": "nvidia"}, "accelerator": {"capacity": "8"}}}]})");
    auto fixture = start();
    const std::string greedy = R"({"metadata": {"name": "big", "namespace": "team-a"},
        "spec": {"model": {"name": "m"}, "engine": {"name": "vLLM", "version": "0.29.0"},
                 "roles": [{"name": "s", "instanceType": "h20", "resources": {"accelerator": "9"}}]}})";
    HttpsClient client(fixture->port(), fixture->client_options());
    ASSERT_TRUE(client.connect());
    json::value response;
    for (int i = 0; i < 100; ++i) {
        response = json::parse(client.request("POST", "/validate", validate_review(greedy)).body)
                       .at("response");
        if (!response.at("allowed").as_bool()) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_EQ(response.at("allowed"), false);
    EXPECT_EQ(response.at("status").at("details").at("causes").at(0).at("message"),
              "role `s` asks for 9 whole accelerators; InstanceType `h20` has 8 in its pool "
              "[instance-type-capacity]");
}

}  // namespace
}  // namespace mdadmit::test
