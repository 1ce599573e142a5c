// Section 4 of the rules contract: engine arguments the operator owns or bounds.
#include <gtest/gtest.h>

#include "support.hpp"

namespace mdadmit::test {
namespace {

using rules::Severity;

std::vector<rules::Finding> owned_args(std::string_view engine, std::string_view roles,
                                       std::string_view extra = "") {
    return of_rule(judge(deployment(engine, "", roles, extra)), "engine-owned-args");
}

TEST(EngineOwnedArgs, VllmOwnedFlagIsRefusedWithTheEscapeHatch) {
    const auto found =
        owned_args("vLLM", "[{name: s, extraArgs: [--enforce-eager, --kv-transfer-config, '{}']}]");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].severity, Severity::deny);
    EXPECT_EQ(found[0].path, "spec.roles[0].extraArgs[1]");
    EXPECT_EQ(found[0].message,
              "`--kv-transfer-config` is set by the operator on role `s`: it wires the KV "
              "connector of Prefill/Decode roles and of spec.kvCache");
    EXPECT_EQ(found[0].hint,
              "remove it; to pass it yourself, take the role over with `command` (the operator "
              "then renders nothing for it)");
}

TEST(EngineOwnedArgs, VllmSpellingsAreRecognised) {
    // Underscores, a dotted member and a unique prefix all reach --kv-transfer-config or
    // --kv-events-config in vLLM's parser.
    const auto found = owned_args(
        "vLLM",
        "[{name: s, extraArgs: ['--kv_transfer_config={}', '--kv-transfer-config.kv_role=kv_both', "
        "--kv-trans, '{}', '--kv-e={}']}]");
    ASSERT_EQ(found.size(), 4u);
    EXPECT_EQ(found[0].path, "spec.roles[0].extraArgs[0]");
    EXPECT_EQ(found[0].message.substr(0, 63),
              "`--kv_transfer_config` (read as `--kv-transfer-config`) is set ");
    EXPECT_EQ(found[1].path, "spec.roles[0].extraArgs[1]");
    EXPECT_EQ(found[2].path, "spec.roles[0].extraArgs[2]");
    EXPECT_EQ(found[3].path, "spec.roles[0].extraArgs[4]");
    EXPECT_NE(found[3].message.find("(read as `--kv-events-config`)"), std::string::npos);
}

TEST(EngineOwnedArgs, AmbiguousPrefixesAndOtherFlagsAreLeftAlone) {
    // `--kv-` could be --kv-cache-dtype too; vLLM refuses it itself, it is not an owned flag.
    EXPECT_TRUE(
        owned_args("vLLM", "[{name: s, extraArgs: [--kv-, x, --kv-cache-dtype, fp8]}]").empty());
    // SGLang takes no abbreviations or underscores here, and vLLM's flags are not SGLang's.
    EXPECT_TRUE(
        owned_args("SGLang",
                   "[{name: s, extraArgs: [--disaggregation_mode, prefill, --kv-transfer-config, "
                   "'{}']}]")
            .empty());
}

TEST(EngineOwnedArgs, TakeOverRolesAreNotJudged) {
    EXPECT_TRUE(
        owned_args("vLLM", "[{name: s, command: [vllm, serve, m, --kv-transfer-config, '{}']}]")
            .empty());
}

TEST(EngineOwnedArgs, SglangOwnedFlagsAreRefused) {
    const auto found = owned_args(
        "SGLang",
        "[{name: p, kind: Prefill, extraArgs: ['--disaggregation-mode=prefill']}, {name: d, kind: "
        "Decode, extraArgs: [--hicache-storage-backend, mooncake]}]");
    ASSERT_EQ(found.size(), 2u);
    EXPECT_EQ(found[0].path, "spec.roles[0].extraArgs[0]");
    EXPECT_EQ(found[0].message,
              "`--disaggregation-mode` is set by the operator on role `p`: it follows the role's "
              "kind");
    EXPECT_EQ(found[1].path, "spec.roles[1].extraArgs[0]");
}

TEST(EngineOwnedArgs, EncoderUrlsOnlyOnAnSglangPrefillBesideAnEncodeRole) {
    const std::string epd =
        "[{name: e, kind: Encode}, {name: p, kind: Prefill, extraArgs: [--encoder-urls, "
        "'http://x']}, {name: d, kind: Decode}]";
    const auto found = owned_args("SGLang", epd);
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].path, "spec.roles[1].extraArgs[0]");
    EXPECT_EQ(found[0].message,
              "`--encoder-urls` is set by the operator on role `p`: it points the Prefill role at "
              "the Encode role's Service");
    EXPECT_TRUE(owned_args("SGLang",
                           "[{name: p, kind: Prefill, extraArgs: [--encoder-urls, 'http://x']}, "
                           "{name: d, kind: Decode}]")
                    .empty());
}

TEST(EngineOwnedArgs, KvCacheDtypeOnlyWhileAKvCacheIsSet) {
    const std::string roles = "[{name: s, extraArgs: [--kv_cache_dtype, fp8]}]";
    const auto found = owned_args("vLLM", roles, "  kvCache: {poolRef: {name: pool}}\n");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].path, "spec.roles[0].extraArgs[0]");
    EXPECT_EQ(found[0].message,
              "`--kv_cache_dtype` (read as `--kv-cache-dtype`) is set by the operator on role `s`: "
              "the KV cache pool of spec.kvCache fixes the cache's data type");
    EXPECT_TRUE(owned_args("vLLM", roles).empty());
}

std::vector<rules::Finding> parallelism(std::string_view engine, std::string_view roles) {
    return of_rule(judge(deployment(engine, "", roles)), "parallelism");
}

TEST(Parallelism, DegreesMustBeWholeNumbers) {
    const auto found = parallelism(
        "vLLM", "[{name: s, extraArgs: [-tp, two, '--data-parallel-size-local=-1', -pp]}]");
    ASSERT_EQ(found.size(), 3u);
    EXPECT_EQ(found[0].path, "spec.roles[0].extraArgs[1]");
    EXPECT_EQ(found[0].message,
              "`-tp` on role `s` is `two`; it takes a whole number of at least 1");
    EXPECT_EQ(found[1].path, "spec.roles[0].extraArgs[2]");
    EXPECT_EQ(found[1].message,
              "`--data-parallel-size-local` on role `s` is `-1`; it takes a whole number of at "
              "least 0");
    EXPECT_EQ(found[2].path, "spec.roles[0].extraArgs[3]");
    EXPECT_EQ(found[2].message,
              "`-pp` on role `s` has no value; it takes a whole number of at "
              "least 1");
    EXPECT_TRUE(parallelism("SGLang", "[{name: s, extraArgs: [--tp-size, '0']}]").size() == 1u);
    EXPECT_TRUE(parallelism("vLLM", "[{name: s, extraArgs: ['-dpl=0', -tp, '2']}]").empty());
}

TEST(Parallelism, VllmWidthMustFitTheMembersAccelerators) {
    const auto found = parallelism(
        "vLLM",
        "[{name: s, resources: {accelerator: 4}, extraArgs: [-tp, '2', -pp, '2', -dp, '2']}]");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].path, "spec.roles[0].resources.accelerator");
    EXPECT_EQ(found[0].message,
              "role `s` runs 8 accelerators per member (tensor 2 x pipeline 2 x data 2) but "
              "resources.accelerator is 4");
    EXPECT_EQ(found[0].hint, "set resources.accelerator to 8, or lower the parallel sizes");
    // The local data-parallel size replaces the global one; External DP runs one rank each.
    EXPECT_TRUE(parallelism("vLLM",
                            "[{name: s, resources: {accelerator: 4}, extraArgs: [-tp, '2', -dp, "
                            "'8', -dpl, '2']}]")
                    .empty());
    EXPECT_TRUE(parallelism("vLLM",
                            "[{name: s, resources: {accelerator: 2}, extraArgs: [-tp, '2', -dp, "
                            "'8', --data-parallel-rank, '0']}]")
                    .empty());
}

TEST(Parallelism, SglangDataParallelismNarrowsUnderDpAttention) {
    const std::string wide =
        "[{name: s, resources: {accelerator: 4}, extraArgs: [--tp-size, '4', --dp-size, '2']}]";
    const auto found = parallelism("SGLang", wide);
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].message,
              "role `s` runs 8 accelerators per member (tensor 4 x data 2) but "
              "resources.accelerator is 4");
    EXPECT_TRUE(parallelism("SGLang",
                            "[{name: s, resources: {accelerator: 4}, extraArgs: [--tp-size, '4', "
                            "--dp-size, '2', --enable-dp-attention]}]")
                    .empty());
}

TEST(Parallelism, SilentWithoutAWholeAcceleratorCountOrAcrossNodes) {
    const std::string args = "extraArgs: [-tp, '8']";
    for (const std::string resources :
         {"{}", "{accelerator: 0}", "{accelerator: 1, acceleratorSlicedMemoryPercentage: 50}"}) {
        EXPECT_TRUE(
            parallelism("vLLM", "[{name: s, resources: " + resources + ", " + args + "}]").empty())
            << resources;
    }
    EXPECT_TRUE(parallelism("vLLM",
                            "[{name: s, resources: {accelerator: 4}, extraArgs: [-tp, '8', "
                            "--nnodes, '2']}]")
                    .empty());
    // Fractional or negative counts are not a whole number of cards.
    for (const std::string resources : {"{accelerator: '1500m'}", "{accelerator: '-4'}"}) {
        EXPECT_TRUE(
            parallelism("vLLM", "[{name: s, resources: " + resources + ", " + args + "}]").empty())
            << resources;
    }
}

TEST(Parallelism, TheWidthIsPerMemberWhateverTheSize) {
    const auto found =
        parallelism("vLLM",
                    "[{name: s, size: 2, resources: {accelerator: 4}, extraArgs: [-tp, "
                    "'8']}]");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].message,
              "role `s` runs 8 accelerators per member (tensor 8) but resources.accelerator is 4; "
              "size 2 does not help, the width is per member");
}

TEST(Parallelism, SglangNarrowersAndVllmEnvironment) {
    // Attention DP, MoE DP, DWDP and attention context parallelism share one member's cards.
    for (const std::string narrower :
         {"--enable-dp-attention", "--moe-dp-size, '2'", "--dwdp-size=2", "--attn-cp-size, '2'"}) {
        EXPECT_TRUE(parallelism("SGLang",
                                "[{name: s, resources: {accelerator: 2}, extraArgs: "
                                "[--tp-size, '2', --dp-size, '2', " +
                                    narrower + "]}]")
                        .empty())
            << narrower;
    }
    // Prefill context parallelism does not narrow; expert parallelism adds nothing.
    EXPECT_EQ(parallelism("SGLang",
                          "[{name: s, resources: {accelerator: 3}, extraArgs: "
                          "[--tp-size, '2', --dp-size, '2', --enable-prefill-cp]}]")
                  .size(),
              1u);
    EXPECT_TRUE(parallelism("SGLang",
                            "[{name: s, resources: {accelerator: 1}, extraArgs: [--ep-size, '4']}]")
                    .empty());
    // VLLM_DP_SIZE sets the data-parallel size when no flag sets more than one rank.
    const auto env =
        parallelism("vLLM",
                    "[{name: s, resources: {accelerator: 3}, extraArgs: [-tp, '2'], env: [{name: "
                    "VLLM_DP_SIZE, value: '2'}]}]");
    ASSERT_EQ(env.size(), 1u);
    EXPECT_NE(env[0].message.find("(tensor 2 x data 2)"), std::string::npos);
    const auto malformed =
        parallelism("vLLM", "[{name: s, env: [{name: VLLM_DP_SIZE, value: two}]}]");
    ASSERT_EQ(malformed.size(), 1u);
    EXPECT_EQ(malformed[0].path, "spec.roles[0].env[0]");
    EXPECT_EQ(malformed[0].message,
              "`VLLM_DP_SIZE` on role `s` is `two`; it takes a whole number of at least 1");
    EXPECT_TRUE(parallelism("vLLM",
                            "[{name: s, extraArgs: ['--data-parallel-size=2'], env: "
                            "[{name: VLLM_DP_SIZE, value: two}]}]")
                    .empty());
}

TEST(Parallelism, PrefixesAndTheEndOfOptions) {
    // vLLM's parser resolves a unique prefix; after `--` nothing is a flag.
    const auto prefix =
        parallelism("vLLM", "[{name: s, resources: {accelerator: 1}, extraArgs: [--tensor, '2']}]");
    ASSERT_EQ(prefix.size(), 1u);
    EXPECT_EQ(prefix[0].path, "spec.roles[0].resources.accelerator");
    EXPECT_TRUE(parallelism("vLLM",
                            "[{name: s, resources: {accelerator: 1}, extraArgs: [--, "
                            "--tensor-parallel-size, '2']}]")
                    .empty());
    // The prefix may be written with underscores; a prefix of two spellings (pipeline and
    // prefill-context) is neither.
    EXPECT_EQ(
        parallelism("vLLM",
                    "[{name: s, resources: {accelerator: 1}, extraArgs: [--pipeline_par, '2']}]")
            .size(),
        1u);
    EXPECT_TRUE(
        parallelism("vLLM", "[{name: s, resources: {accelerator: 1}, extraArgs: [--p, '2']}]")
            .empty());
    // Python's int() reads `+2` and `1_0`.
    EXPECT_EQ(parallelism("vLLM",
                          "[{name: s, resources: {accelerator: 1}, extraArgs: [-tp, "
                          "'+2', -pp, '1_0']}]")
                  .size(),
              1u);
}

TEST(EngineOwnedArgs, ExactOwnedFlagsAndRolesTheConditionsLeaveAlone) {
    const auto exact = owned_args(
        "SGLang", "[{name: s, extraArgs: [--hicache-storage-backend-extra-config, '{}']}]");
    ASSERT_EQ(exact.size(), 1u);
    EXPECT_EQ(exact[0].message.substr(0, 42), "`--hicache-storage-backend-extra-config` i");
    EXPECT_EQ(owned_args("vLLM", "[{name: s, extraArgs: [--kv-events-config, '{}']}]").size(), 1u);
    // --encoder-urls is the operator's on the SGLang Prefill role only.
    EXPECT_TRUE(owned_args("SGLang",
                           "[{name: e, kind: Encode}, {name: p, kind: Prefill}, {name: d, kind: "
                           "Decode, extraArgs: [--encoder-urls, 'http://x']}]")
                    .empty());
    EXPECT_EQ(owned_args("SGLang", "[{name: s, extraArgs: [--kv-cache-dtype, fp8]}]",
                         "  kvCache: {poolRef: {name: pool}}\n")
                  .size(),
              1u);
}

TEST(Parallelism, VllmSpellingsAliasesAndNegativeValues) {
    const auto underscores = parallelism(
        "vLLM",
        "[{name: s, resources: {accelerator: 4}, extraArgs: [--tensor_parallel_size, '8']}]");
    ASSERT_EQ(underscores.size(), 1u);
    EXPECT_EQ(underscores[0].message,
              "role `s` runs 8 accelerators per member (tensor 8) but resources.accelerator is 4");
    const auto context = parallelism(
        "vLLM", "[{name: s, resources: {accelerator: 2}, extraArgs: [-tp, '2', -pcp, '2']}]");
    ASSERT_EQ(context.size(), 1u);
    EXPECT_NE(context[0].message.find("(tensor 2 x prefill-context 2)"), std::string::npos);
    EXPECT_EQ(parallelism("SGLang",
                          "[{name: s, resources: {accelerator: 2}, extraArgs: "
                          "[--tensor-parallel-size, '2', --data-parallel-size, '2']}]")
                  .size(),
              1u);
    const auto negative = parallelism("vLLM", "[{name: s, extraArgs: [-dpl, '-5']}]");
    ASSERT_EQ(negative.size(), 1u);
    EXPECT_EQ(negative[0].path, "spec.roles[0].extraArgs[1]");
    EXPECT_EQ(negative[0].message,
              "`-dpl` on role `s` is `-5`; it takes a whole number of at least 0");
}

TEST(Parallelism, OneRankPerMemberInAnyRoleKindAndNoOverflow) {
    EXPECT_TRUE(parallelism("vLLM",
                            "[{name: p, kind: Prefill, resources: {accelerator: 1}, extraArgs: "
                            "[-dp, '4', -dpe]}, {name: d, kind: Decode}]")
                    .empty());
    const auto huge = parallelism("vLLM",
                                  "[{name: s, resources: {accelerator: 8}, extraArgs: [-tp, "
                                  "'4294967296', -pp, '4294967296']}]");
    ASSERT_EQ(huge.size(), 1u);
    EXPECT_EQ(huge[0].path, "spec.roles[0].resources.accelerator");
}

TEST(Parallelism, SilentWhenFlagsWireRanksOverNodesOrPods) {
    for (const std::string wiring :
         {"-dpb, mp", "--data-parallel-address, 10.0.0.1", "--data-parallel-addr, 10.0.0.1",
          "--headless", "--data_parallel_rpc_port, '13345'", "-dpn, '0'", "-dph", "--nnodes=2",
          "-n, '2'"}) {
        EXPECT_TRUE(parallelism("vLLM",
                                "[{name: s, resources: {accelerator: 4}, extraArgs: [-tp, "
                                "'4', -dp, '4', " +
                                    wiring + "]}]")
                        .empty())
            << wiring;
    }
    EXPECT_TRUE(parallelism("SGLang",
                            "[{name: s, resources: {accelerator: 4}, extraArgs: "
                            "[--tp-size, '8', --dist-init-addr, '10.0.0.1:5000']}]")
                    .empty());
}

TEST(Parallelism, ElasticEpRolesAreLeftToElasticEp) {
    const std::string roles =
        "[{name: ep, elasticEp: {width: 4}, resources: {accelerator: 2}, extraArgs: [-tp, '2', "
        "-pp, "
        "'2']}]";
    EXPECT_TRUE(parallelism("vLLM", roles).empty());
}

}  // namespace
}  // namespace mdadmit::test
