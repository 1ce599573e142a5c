// Section 2 of the rules contract: router pairing, owned flags, policies, threshold and the
// External-DP rules.
#include <gtest/gtest.h>

#include "support.hpp"

namespace mdadmit::test {
namespace {

using rules::Severity;

const char* one_server = "[{name: server}]";

TEST(RouterEnginePairing, FiresWhenVllmRouterFrontsSGLang) {
    const auto found = of_rule(judge(deployment("SGLang", "{name: vllm-router}", one_server)),
                               "router-engine-pairing");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].severity, Severity::deny);
    EXPECT_EQ(found[0].path, "spec.router.name");
    EXPECT_EQ(found[0].message,
              "vllm-router fronts vLLM only, not SGLang; use llm-d-router or sglang-gateway");
}

TEST(RouterEnginePairing, FiresWhenSglangGatewayFrontsVllm) {
    const auto found = of_rule(judge(deployment("vllm", "{name: sglang-gateway}", one_server)),
                               "router-engine-pairing");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].message,
              "sglang-gateway fronts SGLang only, not vLLM; use llm-d-router or vllm-router");
}

TEST(RouterEnginePairing, SilentOnMatchingPairsAndLlmDRouter) {
    for (const auto& [engine, router] :
         std::vector<std::pair<std::string, std::string>>{{"vLLM", "vllm-router"},
                                                          {"SGLang", "sglang-gateway"},
                                                          {"vLLM", "llm-d-router"},
                                                          {"SGLang", "llm-d-router"},
                                                          {"sglang", "sglang-gateway"}}) {
        EXPECT_TRUE(of_rule(judge(deployment(engine, "{name: " + router + "}", one_server)),
                            "router-engine-pairing")
                        .empty())
            << engine << " " << router;
    }
}

TEST(RouterFlagOwned, FiresOnEveryOwnedFlagInEitherSpelling) {
    const auto found = of_rule(judge(deployment("vLLM",
                                                "{name: vllm-router, extraArgs: [--port, '9000', "
                                                "'--selector=a=b', --log-level, debug]}",
                                                one_server)),
                               "router-flag-owned");
    ASSERT_EQ(found.size(), 2u);
    EXPECT_EQ(found[0].path, "spec.router.extraArgs[0]");
    EXPECT_EQ(found[0].message, "`--port` is set by the operator for vllm-router");
    EXPECT_EQ(found[1].path, "spec.router.extraArgs[2]");
    EXPECT_EQ(found[1].message, "`--selector` is set by the operator for vllm-router");
}

TEST(RouterFlagOwned, AnotherRoutersFlagAndPrefixesPass) {
    // --pd-disaggregation belongs to sglang-gateway; --ports is not --port (exact names only).
    const auto evaluation = judge(deployment("vLLM",
                                             "{name: vllm-router, extraArgs: [--pd-disaggregation, "
                                             "--ports, '1', --cache-threshold, '0.5']}",
                                             one_server));
    EXPECT_TRUE(of_rule(evaluation, "router-flag-owned").empty());
}

TEST(RouterFlagOwned, LlmDRouterOwnsItsConfigFile) {
    const auto found = of_rule(
        judge(deployment("SGLang", "{name: llm-d-router, extraArgs: ['--config-file=/x.yaml']}",
                         one_server)),
        "router-flag-owned");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].message, "`--config-file` is set by the operator for llm-d-router");
}

TEST(RouterPolicyValue, SuggestsTheClosestValue) {
    const auto found =
        of_rule(judge(deployment(
                    "SGLang", "{name: sglang-gateway, extraArgs: ['--decode-policy=prefix-hash']}",
                    one_server)),
                "router-policy-value");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].path, "spec.router.extraArgs[0]");
    EXPECT_EQ(
        found[0].message,
        "unknown decode policy `prefix-hash` for sglang-gateway; did you mean `prefix_hash`?");
    EXPECT_EQ(found[0].hint,
              "known values: random, round_robin, cache_aware, power_of_two, prefix_hash, manual");
}

TEST(RouterPolicyValue, NoSuggestionForAFarValue) {
    const auto found =
        of_rule(judge(deployment("vLLM", "{name: vllm-router, extraArgs: [--policy, fastest]}",
                                 one_server)),
                "router-policy-value");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].path, "spec.router.extraArgs[1]");
    EXPECT_EQ(found[0].message, "unknown policy `fastest` for vllm-router");
}

TEST(RouterPolicyValue, AValueIsRequired) {
    const auto found =
        of_rule(judge(deployment("vLLM", "{name: vllm-router, extraArgs: [--policy]}", one_server)),
                "router-policy-value");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].path, "spec.router.extraArgs[0]");
    EXPECT_EQ(found[0].message, "`--policy` needs a value for vllm-router");
}

TEST(RouterPolicyValue, LlmDRouterTakesNoPolicyAtAll) {
    const auto found = of_rule(
        judge(deployment(
            "vLLM", "{name: llm-d-router, extraArgs: [--log-level, info, --policy, round_robin]}",
            one_server)),
        "router-policy-value");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].path, "spec.router.extraArgs[2]");
    EXPECT_EQ(
        found[0].message,
        "llm-d-router takes no `--policy`: its scoring profile (prefix match 3, queue depth 2, KV "
        "utilization 2) is fixed");
    EXPECT_EQ(found[0].hint, "remove it; where even spread matters use vllm-router");
}

TEST(RouterPolicyValue, SilentOnKnownValues) {
    const auto evaluation = judge(deployment(
        "vLLM",
        "{name: vllm-router, extraArgs: [--policy, round_robin, '--prefill-policy=cache_aware', "
        "--decode-policy, rendezvous_hash]}",
        one_server));
    EXPECT_TRUE(evaluation.findings.empty());
}

TEST(RouterThreshold, FiresOffLlmDRouter) {
    const auto found =
        of_rule(judge(deployment("vLLM", "{name: vllm-router, disaggregationThresholdTokens: 512}",
                                 one_server)),
                "router-threshold");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].path, "spec.router.disaggregationThresholdTokens");
    EXPECT_EQ(found[0].message,
              "disaggregationThresholdTokens exists only on llm-d-router, not on vllm-router");
}

TEST(RouterThreshold, SilentOnLlmDRouter) {
    EXPECT_TRUE(judge(deployment("vLLM", "{name: llm-d-router, disaggregationThresholdTokens: 0}",
                                 one_server))
                    .findings.empty());
}

const char* sglang_pd_and_dp =
    "[{name: prefill, kind: Prefill}, {name: decode, kind: Decode, extraArgs: "
    "[--enable-dp-attention, --dp-size, '2']}]";

TEST(PdDpAwareExclusion, FiresWhenAPairSitsBesideAttentionDp) {
    const auto found =
        of_rule(judge(deployment("SGLang", "{name: sglang-gateway}", sglang_pd_and_dp)),
                "pd-dp-aware-exclusion");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].severity, Severity::deny);
    EXPECT_EQ(found[0].path, "spec.router");
    EXPECT_EQ(
        found[0].message,
        "sglang-gateway would need --pd-disaggregation for the Prefill+Decode pair and --dp-aware "
        "for "
        "attention-DP role `decode`; together they send decode traffic to an invalid destination");
}

TEST(PdDpAwareExclusion, SilentWithoutThePairOrWithOneRankOrAnotherRouter) {
    EXPECT_TRUE(of_rule(judge(deployment("SGLang", "{name: llm-d-router}", sglang_pd_and_dp)),
                        "pd-dp-aware-exclusion")
                    .empty());
    EXPECT_TRUE(
        of_rule(judge(deployment("SGLang", "{name: sglang-gateway}",
                                 "[{name: prefill, kind: Prefill}, {name: decode, kind: Decode, "
                                 "extraArgs: [--enable-dp-attention, --dp-size, '1']}]")),
                "pd-dp-aware-exclusion")
            .empty());
    EXPECT_TRUE(
        of_rule(judge(deployment(
                    "SGLang", "{name: sglang-gateway}",
                    "[{name: server, extraArgs: [--enable-dp-attention, --dp-size, '4']}]")),
                "pd-dp-aware-exclusion")
            .empty());
}

TEST(PdDpAwareExclusion, AnEncodeRoleIsNeverRegisteredByTheGateway) {
    // Attention DP on the encoder renders nothing on the gateway, as under llm-d-router.
    EXPECT_TRUE(of_rule(judge(deployment("SGLang", "{name: sglang-gateway}",
                                         "[{name: e, kind: Encode, extraArgs: "
                                         "[--enable-dp-attention, --dp-size, '2']}, {name: p, "
                                         "kind: Prefill}, {name: d, kind: Decode}]")),
                        "pd-dp-aware-exclusion")
                    .empty());
}

TEST(ExternalDpRouter, WarnsForEachExternalDpWiringBehindLlmDRouter) {
    for (const char* args : {"[-dpe]", "['--data-parallel-rank=0']", "[-dpn, '1']",
                             "[--data-parallel-start-rank, '2', -dpl, '1']"}) {
        const auto found =
            of_rule(judge(deployment("vLLM", "{name: llm-d-router}",
                                     "[{name: ranks, extraArgs: " + std::string(args) + "}]")),
                    "external-dp-router");
        ASSERT_EQ(found.size(), 1u) << args;
        EXPECT_EQ(found[0].severity, Severity::warn);
        EXPECT_EQ(found[0].path, "spec.router.name");
        EXPECT_EQ(found[0].message,
                  "External DP role `ranks`: llm-d-router spreads ranks unevenly; use "
                  "vllm-router");
    }
}

TEST(ExternalDpRouter, SglangAttentionDpPrefersTheGateway) {
    const auto found = of_rule(
        judge(deployment("SGLang", "{name: llm-d-router}",
                         "[{name: s, extraArgs: [--enable-dp-attention, --dp-size, '2']}]")),
        "external-dp-router");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].message,
              "External DP role `s`: llm-d-router spreads ranks unevenly; use "
              "sglang-gateway");
}

TEST(ExternalDpRouter, SilentForInternalServersAndOtherRouters) {
    EXPECT_TRUE(
        judge(deployment("vLLM", "{name: llm-d-router}",
                         "[{name: s, extraArgs: [--data-parallel-start-rank, '2', -dpl, '2']}]"))
            .findings.empty());
    EXPECT_TRUE(judge(deployment("vLLM", "{name: vllm-router}", "[{name: s, extraArgs: [-dpe]}]"))
                    .findings.empty());
}

std::string sglang_external_dp(std::string_view image_field) {
    return deployment("SGLang", "{name: sglang-gateway" + std::string(image_field) + "}",
                      "[{name: dp, size: 2, extraArgs: [--enable-dp-attention, --dp-size, '2']}]");
}

TEST(DpAwareImage, WarnsForAnImageOlderThanTheFanOut) {
    const auto found =
        of_rule(judge(sglang_external_dp(", image: 'registry.local/gpustack/llm-router:v0.3.1'")),
                "dp-aware-image");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].severity, Severity::warn);
    EXPECT_EQ(found[0].path, "spec.router.image");
    EXPECT_EQ(found[0].message,
              "tag v0.3.1 predates v0.4.0: the gateway registers one worker per group, not per "
              "rank");
    // The image's own tags: two parts, a post-release, an architecture suffix, no `v`.
    for (const char* tag : {"v0.3", "v0.3.1.post1", "v0.3.1-amd64", "0.3.1", "v0.3.9rc1"}) {
        EXPECT_EQ(of_rule(judge(sglang_external_dp(
                              ", image: 'gpustack/llm-router:" + std::string(tag) + "'")),
                          "dp-aware-image")
                      .size(),
                  1u)
            << tag;
    }
}

TEST(DpAwareImage, APreReleaseOfTheMinimumIsOlder) {
    EXPECT_EQ(of_rule(judge(sglang_external_dp(", image: 'gpustack/llm-router:v0.4.0-rc1'")),
                      "dp-aware-image")
                  .size(),
              1u);
}

TEST(DpAwareImage, SilentForNewDefaultCustomOrFloatingImages) {
    for (const char* field :
         {"", ", image: 'gpustack/llm-router:v0.4.0'", ", image: 'gpustack/llm-router:v1.2.3'",
          ", image: 'gpustack/llm-router:v0.4'", ", image: 'gpustack/llm-router:v0.4.0.post1'",
          ", image: 'gpustack/llm-router:v0.4.0-amd64'", ", image: 'gpustack/llm-router:0.10'",
          ", image: 'gpustack/llm-router:latest'", ", image: 'acme/my-gateway:v0.1.0'",
          ", image: 'gpustack/llm-router@sha256:abc'"}) {
        EXPECT_TRUE(of_rule(judge(sglang_external_dp(field)), "dp-aware-image").empty()) << field;
    }
}

}  // namespace
}  // namespace mdadmit::test
