// The mutation plan: candidates per serving mode and the operator-owned flags per container.
#include "mdadmit/rules/plan.hpp"

#include <gtest/gtest.h>

#include "mdadmit/inputs/documents.hpp"
#include "mdadmit/rules/decode.hpp"
#include "support.hpp"

namespace mdadmit::test {
namespace {

using rules::FlagTarget;

std::string md(std::string_view engine, std::string_view router, std::string_view roles) {
    std::string yaml = deployment(engine, router, roles);
    yaml.replace(yaml.find("{name: md, namespace: ns}"), 25, "{name: chat, namespace: team-a}");
    return yaml;
}

TEST(Plan, CandidatesFollowTheSeedsTable) {
    const auto plan = plan_of(
        md("vLLM", "{name: vllm-router}",
           "[{name: internal, replicas: 2, size: 2}, {name: ranks, size: 3, extraArgs: [-dpe]}, "
           "{name: ep, elasticEp: {width: 4}}]"));
    EXPECT_EQ(plan.role("internal")->candidate, (std::vector<bool>{true, false}));
    EXPECT_EQ(plan.role("ranks")->candidate, (std::vector<bool>{true, true, true}));
    EXPECT_EQ(plan.role("ep")->candidate, (std::vector<bool>{true}));
    const auto pd =
        plan_of(md("vLLM", "{name: llm-d-router}",
                   "[{name: e, kind: Encode, size: 2}, {name: p, kind: Prefill, size: 2}, "
                   "{name: d, kind: Decode, size: 4}]"));
    EXPECT_EQ(pd.role("e")->candidate, (std::vector<bool>{false, false}));
    EXPECT_EQ(pd.role("p")->candidate, (std::vector<bool>{true, false}));
    EXPECT_EQ(pd.role("d")->candidate, (std::vector<bool>{true, false, false, false}));
}

TEST(Plan, OneLocalRankPerMemberIsTheExternalShape) {
    // vLLM's hybrid balancing with one local rank starts one rank per member.
    const auto plan = plan_of(md("vLLM", "{name: vllm-router}",
                                 "[{name: h, size: 2, extraArgs: [-dph, -dpl, '1', -dp, '2']}, "
                                 "{name: i, size: 2, extraArgs: [-dph, -dpl, '2', -dp, '2']}]"));
    EXPECT_EQ(plan.role("h")->candidate, (std::vector<bool>{true, true}));
    EXPECT_EQ(plan.role("i")->candidate, (std::vector<bool>{true, false}));
}

TEST(Plan, LowerCaseKindsOfOlderCrdsArePlannedAsTheirKinds) {
    const auto plan = plan_of(md("vllm", "{name: llm-d-router}",
                                 "[{name: p, kind: prefill, size: 2}, {name: d, kind: decode}]"));
    EXPECT_EQ(plan.role("p")->kind, rules::RoleKind::prefill);
    EXPECT_EQ(plan.role("p")->candidate, (std::vector<bool>{true, false}));
    EXPECT_EQ(plan.role("d")->candidate, (std::vector<bool>{true}));
}

TEST(Plan, SglangGatewayGetsDpAwareOnlyWithoutAPair) {
    const auto dp =
        plan_of(md("SGLang", "{name: sglang-gateway}",
                   "[{name: s, size: 2, extraArgs: [--enable-dp-attention, --dp-size, '2']}]"));
    ASSERT_EQ(dp.router_flags.size(), 1u);
    EXPECT_EQ(dp.router_flags[0].flag, "--dp-aware");
    EXPECT_EQ(dp.router_flags[0].value, "");
    const auto paired =
        plan_of(md("SGLang", "{name: sglang-gateway}",
                   "[{name: p, kind: Prefill, extraArgs: [--enable-dp-attention, --dp-size, '2']}, "
                   "{name: d, kind: Decode}]"));
    EXPECT_TRUE(paired.router_flags.empty());
    EXPECT_TRUE(
        plan_of(md("SGLang", "{name: sglang-gateway}", "[{name: s}]")).router_flags.empty());
}

TEST(Plan, VllmRouterGetsTheEncoderServiceThroughEpdConfig) {
    const auto plan =
        plan_of(md("vLLM", "{name: vllm-router}",
                   "[{name: enc, kind: Encode, ports: [{port: 9000}]}, {name: p, kind: Prefill}, "
                   "{name: d, kind: Decode}]"));
    ASSERT_EQ(plan.router_flags.size(), 1u);
    EXPECT_EQ(plan.router_flags[0].target, FlagTarget::router);
    EXPECT_EQ(plan.router_flags[0].flag, "--epd-config");
    EXPECT_EQ(plan.router_flags[0].value,
              R"({"encoder_urls":["http://chat-enc.team-a.svc:9000"]})");
    EXPECT_TRUE(plan.role("p")->flags.empty());
}

TEST(Plan, SglangPrefillCallsTheEncoderThroughEncoderUrls) {
    const auto plan = plan_of(
        md("SGLang", "{name: llm-d-router}",
           "[{name: enc, kind: Encode}, {name: p, kind: Prefill}, {name: d, kind: Decode}]"));
    ASSERT_EQ(plan.role("p")->flags.size(), 1u);
    const auto& flag = plan.role("p")->flags[0];
    EXPECT_EQ(flag.target, FlagTarget::engine);
    EXPECT_EQ(flag.flag, "--encoder-urls");
    EXPECT_EQ(flag.value, "http://chat-enc.team-a.svc:8000");
    EXPECT_TRUE(flag.separate_value);
    EXPECT_TRUE(plan.role("d")->flags.empty());
    EXPECT_TRUE(plan.router_flags.empty());
}

TEST(Plan, ATakeOverRoleGetsNoFlags) {
    // The operator renders nothing for a role that replaced its command line.
    const auto plan = plan_of(md("SGLang", "{name: sglang-gateway}",
                                 "[{name: enc, kind: Encode}, {name: p, kind: Prefill, command: "
                                 "[python, -m, sglang.launch_server]}, {name: d, kind: Decode}]"));
    EXPECT_TRUE(plan.role("p")->flags.empty());
}

TEST(Plan, TheDecodeSidecarConnectorFollowsThePlatform) {
    const std::string roles =
        "[{name: enc, kind: Encode, instanceType: gpu}, {name: p, kind: Prefill}, {name: d, kind: "
        "Decode}]";
    for (const auto& [manufacturer, connector] : std::vector<std::pair<std::string, std::string>>{
             {"NVIDIA", "ec-nixl"}, {"AMD", "ec-nixl"}, {"Huawei Ascend", "ec-example"}}) {
        const auto plan =
            plan_of(instance_type("gpu", manufacturer) + md("vLLM", "{name: llm-d-router}", roles));
        ASSERT_EQ(plan.role("d")->flags.size(), 1u) << manufacturer;
        EXPECT_EQ(plan.role("d")->flags[0].target, FlagTarget::routing_sidecar);
        EXPECT_EQ(plan.role("d")->flags[0].flag, "--ec-connector");
        EXPECT_EQ(plan.role("d")->flags[0].value, connector);
    }
    const auto unknown = plan_of(md("vLLM", "{name: llm-d-router}", roles));
    EXPECT_TRUE(unknown.role("d")->flags.empty());
    ASSERT_EQ(unknown.notes.size(), 1u);
    EXPECT_EQ(unknown.notes[0], "--ec-connector not planned: no value for platform unknown");
}

}  // namespace
}  // namespace mdadmit::test
