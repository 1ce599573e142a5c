// JSON Patch for Pods, applied with an independent RFC 6902 implementation (nlohmann_json).
#include "mdadmit/rules/pod_patch.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <nlohmann/json.hpp>

#include "mdadmit/inputs/documents.hpp"
#include "mdadmit/rules/decode.hpp"
#include "support.hpp"

namespace mdadmit::test {
namespace {

namespace json = boost::json;

// Applies the patch with nlohmann_json, not with anything of ours.
json::value apply(const json::value& pod, const json::array& patch) {
    const auto result = nlohmann::json::parse(json::serialize(pod))
                            .patch(nlohmann::json::parse(json::serialize(patch)));
    return json::parse(result.dump());
}

json::value engine_pod(std::string_view role, int member, std::string_view extra_labels = "",
                       std::string_view containers = R"([{"name": "engine", "args": ["serve"]}])") {
    return json::parse(
        R"({"metadata": {"name": "p", "labels": {"app.kubernetes.io/name": "model-deployment",
        "app.kubernetes.io/instance": "chat", "app.kubernetes.io/component": ")" +
        std::string(role) + R"(", "modeldeployment.gpustack.ai/member-index": ")" +
        std::to_string(member) + "\"" + std::string(extra_labels) + R"(}},
        "spec": {"containers": )" +
        std::string(containers) + "}}");
}

const std::string epd_sglang = deployment(
    "SGLang", "{name: llm-d-router}",
    "[{name: enc, kind: Encode}, {name: p, kind: Prefill, size: 2}, {name: d, kind: Decode}]");

TEST(PodPatch, PodsAreIdentifiedByTheOperatorsLabels) {
    const auto engine = rules::identify_pod(engine_pod("p", 1));
    ASSERT_TRUE(engine.has_value());
    EXPECT_EQ(engine->kind, rules::PodIdentity::Kind::engine);
    EXPECT_EQ(engine->deployment, "chat");
    EXPECT_EQ(engine->role, "p");
    EXPECT_EQ(engine->member_index, 1);
    const auto router = rules::identify_pod(
        json::parse(R"({"metadata": {"labels": {"modeldeployment.gpustack.ai/router": "chat"}}})"));
    ASSERT_TRUE(router.has_value());
    EXPECT_EQ(router->kind, rules::PodIdentity::Kind::router);
    EXPECT_FALSE(rules::identify_pod(json::parse(R"({"metadata": {"labels": {"app": "nginx"}}})"))
                     .has_value());
    EXPECT_FALSE(rules::identify_pod(json::parse("42")).has_value());
}

TEST(PodPatch, ALeaderGetsTheLabelAndTheFlagAndTheSecondPatchIsEmpty) {
    const auto plan = plan_of(epd_sglang);
    const json::value pod = engine_pod("p", 0);
    const json::array patch = rules::pod_patch(pod, *rules::identify_pod(pod), plan);
    EXPECT_EQ(patch, json::parse(R"([
        {"op": "add", "path": "/metadata/labels/modeldeployment.gpustack.ai~1router-candidate", "value": "true"},
        {"op": "add", "path": "/spec/containers/0/args/-", "value": "--encoder-urls"},
        {"op": "add", "path": "/spec/containers/0/args/-", "value": "http://md-enc.ns.svc:8000"}])"));
    const json::value patched = apply(pod, patch);
    EXPECT_EQ(patched.at("spec").at("containers").at(0).at("args"),
              json::parse(R"(["serve", "--encoder-urls", "http://md-enc.ns.svc:8000"])"));
    EXPECT_TRUE(rules::pod_patch(patched, *rules::identify_pod(patched), plan).empty());
}

TEST(PodPatch, AWronglySetLabelIsRemovedFromANonCandidate) {
    const auto plan = plan_of(epd_sglang);
    const json::value encoder =
        engine_pod("enc", 0, R"(, "modeldeployment.gpustack.ai/router-candidate": "true")");
    const json::array patch = rules::pod_patch(encoder, *rules::identify_pod(encoder), plan);
    EXPECT_EQ(
        patch,
        json::parse(
            R"([{"op": "remove", "path": "/metadata/labels/modeldeployment.gpustack.ai~1router-candidate"}])"));
    const json::value patched = apply(encoder, patch);
    EXPECT_FALSE(patched.at("metadata").at("labels").as_object().contains(rules::candidate_label));
    const json::value follower =
        engine_pod("p", 1, "", R"([{"name": "engine", "args": ["--encoder-urls", "x"]}])");
    const json::value fixed =
        apply(follower, rules::pod_patch(follower, *rules::identify_pod(follower), plan));
    EXPECT_FALSE(fixed.at("metadata").at("labels").as_object().contains(rules::candidate_label));
    EXPECT_EQ(fixed.at("spec").at("containers").at(0).at("args"),
              json::parse(R"(["--encoder-urls", "http://md-enc.ns.svc:8000"])"));
}

TEST(PodPatch, MissingLabelsAndArgsAreCreatedNotAddedUnderAMissingParent) {
    const auto plan = plan_of(epd_sglang);
    const json::value pod =
        json::parse(R"({"metadata": {"labels": {"app.kubernetes.io/name": "model-deployment",
        "app.kubernetes.io/instance": "chat", "app.kubernetes.io/component": "p"}},
        "spec": {"containers": [{"name": "sidecar"}, {"name": "engine"}]}})");
    // identify from the labels, then judge a copy without any labels at all
    const auto identity = *rules::identify_pod(pod);
    json::value bare = pod;
    bare.at("metadata").as_object().erase("labels");
    const json::array patch = rules::pod_patch(bare, identity, plan);
    EXPECT_EQ(patch, json::parse(R"([
        {"op": "add", "path": "/metadata/labels", "value": {"modeldeployment.gpustack.ai/router-candidate": "true"}},
        {"op": "add", "path": "/spec/containers/1/args", "value": ["--encoder-urls", "http://md-enc.ns.svc:8000"]}])"));
    const json::value patched = apply(bare, patch);
    EXPECT_TRUE(rules::pod_patch(patched, identity, plan).empty());
}

TEST(PodPatch, AWrongValueIsReplacedInTheSpellingItHas) {
    const auto plan = plan_of(
        instance_type("gpu", "ascend") +
        deployment("vLLM", "{name: llm-d-router}",
                   "[{name: enc, kind: Encode, instanceType: gpu}, {name: p, kind: Prefill}, "
                   "{name: d, kind: Decode}]"));
    const json::value pod = engine_pod(
        "d", 0, "",
        R"([{"name": "engine", "args": []}, {"name": "routing-sidecar", "args": ["--ec-connector=ec-nixl", "-v"]}])");
    const json::array patch = rules::pod_patch(pod, *rules::identify_pod(pod), plan);
    EXPECT_EQ(patch, json::parse(R"([
        {"op": "add", "path": "/metadata/labels/modeldeployment.gpustack.ai~1router-candidate", "value": "true"},
        {"op": "replace", "path": "/spec/containers/1/args/0", "value": "--ec-connector=ec-example"}])"));
    EXPECT_TRUE(rules::pod_patch(apply(pod, patch), *rules::identify_pod(pod), plan).empty());
}

TEST(PodPatch, RouterPodsGetTheRoutersFlagsOnTheirFirstContainer) {
    const auto plan = plan_of(
        deployment("SGLang", "{name: sglang-gateway}",
                   "[{name: s, size: 2, extraArgs: [--enable-dp-attention, --dp-size, '4']}]"));
    const json::value router =
        json::parse(R"({"metadata": {"labels": {"modeldeployment.gpustack.ai/router": "md"}},
        "spec": {"containers": [{"name": "gateway", "args": ["--dp-aware=false", "--policy", "round_robin"]}]}})");
    const json::array patch = rules::pod_patch(router, *rules::identify_pod(router), plan);
    EXPECT_EQ(
        patch,
        json::parse(
            R"([{"op": "replace", "path": "/spec/containers/0/args/0", "value": "--dp-aware"}])"));
    EXPECT_TRUE(rules::pod_patch(apply(router, patch), *rules::identify_pod(router), plan).empty());
}

TEST(PodPatch, TheEngineFlagsGoToTheFirstContainerWhenNoneIsNamedEngine) {
    const auto plan = plan_of(epd_sglang);
    const json::value pod =
        engine_pod("p", 0, "", R"([{"name": "sglang", "args": ["serve"]}, {"name": "log"}])");
    const json::array patch = rules::pod_patch(pod, *rules::identify_pod(pod), plan);
    ASSERT_EQ(patch.size(), 3u);
    EXPECT_EQ(patch[1].at("path"), "/spec/containers/0/args/-");
    // A sidecar is only ever found by its name.
    const auto sidecar_plan = plan_of(
        deployment("vLLM", "{name: llm-d-router}",
                   "[{name: enc, kind: Encode, instanceType: h100}, {name: p, kind: Prefill}, "
                   "{name: d, kind: Decode}]") +
        "---\n" + instance_type("h100", "NVIDIA"));
    const json::value decode = engine_pod("d", 0, "", R"([{"name": "vllm", "args": ["serve"]}])");
    for (const auto& op : rules::pod_patch(decode, *rules::identify_pod(decode), sidecar_plan)) {
        EXPECT_EQ(op.at("path").as_string().find("/spec/containers"), std::string::npos) << op;
    }
}

TEST(PodPatch, DpAwareIsNeverAddedBesidePdDisaggregation) {
    const auto plan = plan_of(deployment("SGLang", "{name: sglang-gateway}",
                                         "[{name: s, size: 2, extraArgs: [--enable-dp-attention, "
                                         "--dp-size, '2']}]"));
    const auto router = [](std::string_view args) {
        return json::parse(
            R"({"metadata": {"labels": {"modeldeployment.gpustack.ai/router": "md"}},
                "spec": {"containers": [{"name": "gateway", "args": )" +
            std::string(args) + "}]}}");
    };
    const json::value plain = router(R"(["--policy", "round_robin"])");
    EXPECT_EQ(rules::pod_patch(plain, *rules::identify_pod(plain), plan).size(), 1u);
    const json::value paired = router(R"(["--pd-disaggregation"])");
    EXPECT_TRUE(rules::pod_patch(paired, *rules::identify_pod(paired), plan).empty());
}

TEST(PodPatch, AFlagGoesBeforeTheEndOfOptions) {
    const auto plan = plan_of(epd_sglang);
    const json::value pod =
        engine_pod("p", 0, "", R"([{"name": "engine", "args": ["serve", "--", "extra"]}])");
    const json::array patch = rules::pod_patch(pod, *rules::identify_pod(pod), plan);
    const json::value patched = apply(pod, patch);
    EXPECT_EQ(patched.at("spec").at("containers").at(0).at("args"),
              json::parse(R"(["serve", "--encoder-urls", "http://md-enc.ns.svc:8000", "--",
                              "extra"])"));
    EXPECT_TRUE(rules::pod_patch(patched, *rules::identify_pod(patched), plan).empty());
}

TEST(PodPatch, PointerTokensAreEscaped) {
    EXPECT_EQ(rules::escape_pointer_token("a/b~c"), "a~1b~0c");
}

}  // namespace
}  // namespace mdadmit::test
