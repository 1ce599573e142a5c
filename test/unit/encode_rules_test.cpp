// Section 2 of the rules contract, Encode stage: shape, admitted matrix, unknown platform.
#include <gtest/gtest.h>

#include "support.hpp"

namespace mdadmit::test {
namespace {

using rules::Severity;

std::string epd(std::string_view engine, std::string_view router, std::string_view instance_type) {
    const std::string it = "instanceType: " + std::string(instance_type);
    return deployment(engine, "{name: " + std::string(router) + "}",
                      "[{name: enc, kind: Encode, " + it + "}, {name: pre, kind: Prefill, " + it +
                          "}, {name: dec, kind: Decode, " + it + "}]");
}

TEST(EncodeShape, AtMostOneEncodeRole) {
    const auto found = of_rule(
        judge(deployment(
            "vLLM", "{name: llm-d-router}",
            "[{name: e1, kind: Encode}, {name: e2, kind: Encode}, {name: p, kind: Prefill}, "
            "{name: d, kind: Decode}]")),
        "encode-shape");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].severity, Severity::deny);
    EXPECT_EQ(found[0].path, "spec.roles[1].kind");
    EXPECT_EQ(found[0].message, "at most one Encode role; roles `e1` and `e2` are both Encode");
}

TEST(EncodeShape, NeedsPrefillDecodeAndARouter) {
    const auto found = of_rule(
        judge(deployment("vLLM", "", "[{name: p, kind: Prefill}, {name: e, kind: Encode}]")),
        "encode-shape");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].path, "spec.roles[1].kind");
    EXPECT_EQ(found[0].message,
              "Encode role `e` needs a Decode role and a router (spec.router) beside it");
}

TEST(EncodeShape, SilentOnACompleteEpdDeployment) {
    const auto evaluation =
        judge(instance_type("h100", "NVIDIA") + epd("vLLM", "llm-d-router", "h100"));
    EXPECT_TRUE(of_rule(evaluation, "encode-shape").empty());
    EXPECT_TRUE(evaluation.findings.empty());
}

TEST(EncodeMatrix, EveryAdmittedRowPasses) {
    struct Row {
        const char* router;
        const char* engine;
        const char* manufacturer;
    };
    for (const Row row :
         {Row{"llm-d-router", "vLLM", "NVIDIA"}, Row{"llm-d-router", "vLLM", "AMD"},
          Row{"llm-d-router", "vLLM", "Huawei Ascend"}, Row{"vllm-router", "vLLM", "nvidia"},
          Row{"vllm-router", "vLLM", "amd"}, Row{"llm-d-router", "SGLang", "nvidia"},
          Row{"llm-d-router", "SGLang", "amd"}, Row{"sglang-gateway", "SGLang", "nvidia"},
          Row{"sglang-gateway", "SGLang", "amd"}}) {
        const auto evaluation =
            judge(instance_type("gpu", row.manufacturer) + epd(row.engine, row.router, "gpu"));
        EXPECT_TRUE(evaluation.findings.empty())
            << row.router << " " << row.engine << " " << row.manufacturer << ": "
            << (evaluation.findings.empty() ? "" : evaluation.findings[0].message);
    }
}

TEST(EncodeMatrix, RefusesAPlatformOffTheRowAndNamesTheRoutersThatAdmitIt) {
    const auto found =
        of_rule(judge(instance_type("npu", "ascend") + epd("SGLang", "sglang-gateway", "npu")),
                "encode-matrix");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].severity, Severity::deny);
    EXPECT_EQ(found[0].path, "spec.roles[0]");
    EXPECT_EQ(found[0].message,
              "Encode on sglang-gateway + SGLang is admitted on nvidia and amd, not ascend; no "
              "router admits "
              "Encode on SGLang + ascend");
}

TEST(EncodeMatrix, AnOtherVendorIsOffEveryRow) {
    const auto found = of_rule(
        judge(instance_type("x", "Intel") + epd("vLLM", "llm-d-router", "x")), "encode-matrix");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].message,
              "Encode on llm-d-router + vLLM is admitted on nvidia, amd and ascend, not other; no "
              "router admits "
              "Encode on vLLM + other");
}

TEST(EncodeMatrix, RefusesARouterEngineWithoutARow) {
    const auto found =
        of_rule(judge(instance_type("gpu", "nvidia") + epd("SGLang", "vllm-router", "gpu")),
                "encode-matrix");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].message,
              "Encode is not admitted on vllm-router + SGLang; admitted: llm-d-router + vLLM, "
              "vllm-router + vLLM, "
              "llm-d-router + SGLang, sglang-gateway + SGLang");
}

TEST(EncodePlatformUnknown, WarnsWhenTheInstanceTypeIsUnknownOrUncomputed) {
    for (const auto& [prefix, why] :
         {std::pair{std::string(), std::string("InstanceType `gpu` unknown")},
          std::pair{instance_type("gpu", ""),
                    std::string("InstanceType `gpu` has no manufacturer yet")}}) {
        const auto evaluation = judge(prefix + epd("vLLM", "vllm-router", "gpu"));
        EXPECT_TRUE(evaluation.allowed());
        const auto found = of_rule(evaluation, "encode-platform-unknown");
        ASSERT_EQ(found.size(), 1u);
        EXPECT_EQ(found[0].severity, Severity::warn);
        EXPECT_EQ(found[0].path, "spec.roles[0].instanceType");
        EXPECT_EQ(found[0].message, why + "; Encode matrix unchecked");
        EXPECT_TRUE(of_rule(evaluation, "encode-matrix").empty());
    }
}

TEST(EncodePlatformUnknown, CanBeConfiguredToDeny) {
    rules::EngineOptions options;
    options.enforcement.entries = {{"encode-platform-unknown", rules::Action::deny}};
    const auto evaluation = judge(epd("vLLM", "vllm-router", "gpu"), options);
    EXPECT_FALSE(evaluation.allowed());
    EXPECT_EQ(of_rule(evaluation, "encode-platform-unknown").at(0).severity, Severity::deny);
}

TEST(EncodePlatformUnknown, SkippedForAnObjectBeingDeleted) {
    std::string yaml = epd("vLLM", "vllm-router", "gpu");
    yaml.replace(yaml.find("{name: md, namespace: ns}"), 25,
                 "{name: md, namespace: ns, deletionTimestamp: '2026-01-01T00:00:00Z'}");
    EXPECT_TRUE(judge(yaml).findings.empty());
}

}  // namespace
}  // namespace mdadmit::test
