// The Elastic EP profile: the shape of its one role, and what an update may change.
#include <gtest/gtest.h>

#include "support.hpp"

namespace mdadmit::test {
namespace {

std::vector<rules::Finding> elastic(std::string_view engine, std::string_view roles) {
    return of_rule(judge(deployment(engine, "", roles)), "elastic-ep");
}

TEST(ElasticEp, AWellFormedCollectiveIsAdmitted) {
    EXPECT_TRUE(elastic("vLLM",
                        "[{name: ep, elasticEp: {width: 4}, resources: {accelerator: 2}, "
                        "extraArgs: [-tp, '2', --elastic-ep-max-dp-size, '8']}]")
                    .empty());
}

TEST(ElasticEp, VllmOnlyAndTheOnlyRole) {
    const auto sglang = elastic("SGLang", "[{name: ep, elasticEp: {width: 2}}]");
    ASSERT_EQ(sglang.size(), 1u);
    EXPECT_EQ(sglang[0].path, "spec.roles[0].elasticEp");
    EXPECT_EQ(sglang[0].message, "Elastic EP role `ep` needs vLLM; spec.engine.name is `SGLang`");
    const auto two = elastic("vLLM", "[{name: ep, elasticEp: {width: 2}}, {name: s}]");
    ASSERT_EQ(two.size(), 1u);
    EXPECT_EQ(two[0].path, "spec.roles[0].elasticEp");
    EXPECT_EQ(two[0].message, "Elastic EP role `ep` must be the deployment's only role; it has 2");
}

TEST(ElasticEp, ShapeOfTheRole) {
    const auto found = elastic("vLLM",
                               "[{name: ep, kind: Prefill, replicas: 2, size: 2, elasticEp: "
                               "{width: 2}, resources: {accelerator: 4, "
                               "acceleratorSlicedCoresPercentage: 50}}]");
    ASSERT_EQ(found.size(), 5u);
    EXPECT_EQ(found[0].path, "spec.roles[0].kind");
    EXPECT_EQ(found[0].message, "Elastic EP role `ep` must be of kind Server, not Prefill");
    EXPECT_EQ(found[1].path, "spec.roles[0].replicas");
    EXPECT_EQ(found[2].path, "spec.roles[0].size");
    EXPECT_EQ(found[3].path, "spec.roles[0].resources");
    EXPECT_EQ(found[4].path, "spec.roles[0].resources.accelerator");
    EXPECT_EQ(found[4].message,
              "Elastic EP role `ep` has resources.accelerator 4 but a tensor-parallel size of 1; "
              "each member holds exactly one tensor-parallel group");
    const auto command = elastic("vLLM", "[{name: ep, elasticEp: {width: 2}, command: [vllm]}]");
    ASSERT_EQ(command.size(), 1u);
    EXPECT_EQ(command[0].path, "spec.roles[0].command");
}

TEST(ElasticEp, OwnedFlagsAndTheMaximumWidth) {
    const auto found = elastic("vLLM",
                               "[{name: ep, elasticEp: {width: 8}, extraArgs: [--enable_eplb, "
                               "-dp, '4', --elastic-ep-max-dp-size, '4']}]");
    ASSERT_EQ(found.size(), 3u);
    EXPECT_EQ(found[0].path, "spec.roles[0].extraArgs[0]");
    EXPECT_EQ(found[0].message,
              "`--enable_eplb` on Elastic EP role `ep` is set by the operator, which wires the "
              "collective's data parallelism");
    EXPECT_EQ(found[1].path, "spec.roles[0].extraArgs[1]");
    EXPECT_EQ(found[2].path, "spec.roles[0].elasticEp.width");
    EXPECT_EQ(found[2].message,
              "Elastic EP role `ep` has width 8, above its --elastic-ep-max-dp-size 4");
}

TEST(ElasticEp, SilentOnRolesWithoutElasticEp) {
    EXPECT_TRUE(elastic("SGLang", "[{name: s, extraArgs: [--dp-size, '2']}, {name: t}]").empty());
}

TEST(ElasticEp, TensorParallelSpellingsAndAWidthAtTheMaximum) {
    EXPECT_TRUE(elastic("vLLM",
                        "[{name: ep, elasticEp: {width: 8}, resources: {accelerator: 4}, "
                        "extraArgs: [--tensor_parallel_size, '4', --elastic-ep-max-dp-size, '8']}]")
                    .empty());
}

TEST(ElasticEp, TheWidthIsBoundedAndRequired) {
    const auto missing = elastic("vLLM", "[{name: ep, elasticEp: {}}]");
    ASSERT_EQ(missing.size(), 1u);
    EXPECT_EQ(missing[0].path, "spec.roles[0].elasticEp.width");
    EXPECT_EQ(missing[0].message,
              "Elastic EP role `ep` names no width: the number of engines in the collective");
    EXPECT_EQ(missing[0].hint, "set elasticEp.width from 2 to 64, the master included");
    // A width out of range is reported once, by the structural check.
    for (const char* width : {"1", "65"}) {
        const auto evaluation = judge(
            deployment("vLLM", "", "[{name: ep, elasticEp: {width: " + std::string(width) + "}}]"));
        EXPECT_EQ(rule_paths(evaluation),
                  (std::vector<std::string>{"schema@spec.roles[0].elasticEp.width"}))
            << width;
    }
    EXPECT_TRUE(elastic("vLLM", "[{name: ep, elasticEp: {width: 64}}]").empty());
}

TEST(ElasticEp, OneTensorParallelGroupPerMemberAndNoFabric) {
    const auto found = elastic("vLLM",
                               "[{name: ep, elasticEp: {width: 2}, resources: {accelerator: '2', "
                               "interface: '1'}, extraArgs: [-tp, '2', -pp, '2']}]");
    ASSERT_EQ(found.size(), 2u);
    EXPECT_EQ(found[0].path, "spec.roles[0].extraArgs");
    EXPECT_EQ(found[0].message,
              "Elastic EP role `ep` holds one tensor-parallel group per member; its pipeline and "
              "prefill-context parallel sizes must be 1");
    EXPECT_EQ(found[1].path, "spec.roles[0].resources.interface");
    EXPECT_EQ(found[1].message,
              "Elastic EP role `ep` requests 1 fabric interfaces; the elastic profile takes none");
    // A fractional count is never a whole tensor-parallel group.
    const auto fraction = elastic("vLLM",
                                  "[{name: ep, elasticEp: {width: 2}, resources: {accelerator: "
                                  "'1.5'}, extraArgs: [-tp, '2']}]");
    ASSERT_EQ(fraction.size(), 1u);
    EXPECT_EQ(fraction[0].path, "spec.roles[0].resources.accelerator");
    // A quantity string that equals the tensor-parallel size is the defaulted shape.
    EXPECT_TRUE(elastic("vLLM",
                        "[{name: ep, elasticEp: {width: 2}, resources: {accelerator: '2'}, "
                        "extraArgs: [-tp, '2']}]")
                    .empty());
}

TEST(ElasticEp, OwnedEnvironmentAndMaximumSpellings) {
    const auto env =
        elastic("vLLM",
                "[{name: ep, elasticEp: {width: 2}, env: [{name: RAY_BACKEND_LOG_LEVEL, "
                "value: debug}, {name: VLLM_RAY_DP_PACK_STRATEGY, value: span}]}]");
    ASSERT_EQ(env.size(), 1u);
    EXPECT_EQ(env[0].path, "spec.roles[0].env[1]");
    EXPECT_EQ(env[0].message,
              "`VLLM_RAY_DP_PACK_STRATEGY` on Elastic EP role `ep` is set by the operator, which "
              "wires the collective");
    // vLLM reads underscores and a unique prefix of --elastic-ep-max-dp-size; the last wins.
    for (const char* spelled : {"--elastic_ep_max_dp_size=4", "--elastic-ep-max-dp, '4'",
                                "--elastic-ep-max-dp-size=8, --elastic-ep-max-dp-size=4"}) {
        const auto found = elastic("vLLM", "[{name: ep, elasticEp: {width: 5}, extraArgs: [" +
                                               std::string(spelled) + "]}]");
        ASSERT_EQ(found.size(), 1u) << spelled;
        EXPECT_EQ(found[0].path, "spec.roles[0].elasticEp.width");
    }
    // After `--` nothing is a flag.
    EXPECT_TRUE(elastic("vLLM",
                        "[{name: ep, elasticEp: {width: 5}, extraArgs: [--, "
                        "--elastic-ep-max-dp-size=2]}]")
                    .empty());
    // A malformed maximum is parallelism's to report, once.
    const auto malformed = judge(deployment("vLLM", "",
                                            "[{name: ep, elasticEp: {width: 2}, extraArgs: "
                                            "[--elastic-ep-max-dp-size, '4.5']}]"));
    EXPECT_EQ(rule_paths(malformed),
              (std::vector<std::string>{"parallelism@spec.roles[0].extraArgs[1]"}));
}

const std::string base_spec =
    "  model: {name: m, artifactRef: {name: a1}}\n"
    "  engine: {name: vLLM, version: \"1\"}\n"
    "  router: {name: vllm-router}\n";

std::vector<rules::Finding> elastic_update(std::string_view role, std::string_view old_role) {
    const std::string engine = "  model: {name: m}\n  engine: {name: vLLM, version: \"1\"}\n";
    return of_rule(judge_update(with_spec(engine + "  roles: [" + std::string(role) + "]\n"),
                                with_spec(engine + "  roles: [" + std::string(old_role) + "]\n")),
                   "elastic-ep-update");
}

TEST(ElasticEpUpdate, TheWidthMayGrowButNotShrink) {
    EXPECT_TRUE(
        elastic_update("{name: ep, elasticEp: {width: 8}}", "{name: ep, elasticEp: {width: 4}}")
            .empty());
    const auto found =
        elastic_update("{name: ep, elasticEp: {width: 2}}", "{name: ep, elasticEp: {width: 4}}");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].path, "spec.roles[0].elasticEp.width");
    EXPECT_EQ(found[0].message, "elasticEp.width of role `ep` cannot shrink from 4 to 2");
}

TEST(ElasticEpUpdate, TheWidthCannotBeUnset) {
    const auto found =
        elastic_update("{name: ep, elasticEp: {}}", "{name: ep, elasticEp: {width: 4}}");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].path, "spec.roles[0].elasticEp.width");
    EXPECT_EQ(found[0].message, "elasticEp.width of role `ep` cannot shrink from 4 to unset");
}

TEST(ElasticEpUpdate, TheProfileCannotBeAddedOrRemoved) {
    const auto added = elastic_update("{name: ep, elasticEp: {width: 2}}", "{name: ep}");
    ASSERT_EQ(added.size(), 1u);
    EXPECT_EQ(added[0].path, "spec.roles[0].elasticEp");
    EXPECT_EQ(added[0].message, "elasticEp cannot be added to role `ep` after creation");
    const auto removed = elastic_update("{name: ep}", "{name: ep, elasticEp: {width: 2}}");
    ASSERT_EQ(removed.size(), 1u);
    EXPECT_EQ(removed[0].message, "elasticEp cannot be removed from role `ep` after creation");
}

TEST(ElasticEpUpdate, WhatTheCollectiveWasAdmittedWithStays) {
    const std::string before =
        "{name: ep, instanceType: gpu, elasticEp: {width: 2}, resources: {accelerator: '2'}, "
        "extraArgs: [-tp, '2', --elastic-ep-max-dp-size=8]}";
    // Spelling changes and a wider collective are fine.
    EXPECT_TRUE(elastic_update("{name: ep, instanceType: gpu, elasticEp: {width: 4}, resources: "
                               "{accelerator: 2}, extraArgs: [--tensor-parallel-size=2, "
                               "--elastic_ep_max_dp_size, '8']}",
                               before)
                    .empty());
    const auto found = elastic_update(
        "{name: ep, instanceType: gpu-b, elasticEp: {width: 2}, resources: {accelerator: '4'}, "
        "extraArgs: [-tp, '4']}",
        before);
    ASSERT_EQ(found.size(), 4u);
    EXPECT_EQ(found[0].path, "spec.roles[0].extraArgs");
    EXPECT_EQ(found[0].message,
              "the tensor-parallel size of Elastic EP role `ep` cannot change from 2 to 4");
    EXPECT_EQ(found[1].path, "spec.roles[0].extraArgs");
    EXPECT_EQ(found[1].message,
              "--elastic-ep-max-dp-size of Elastic EP role `ep` is fixed at creation (was 8, now "
              "unset)");
    EXPECT_EQ(found[2].path, "spec.roles[0].instanceType");
    EXPECT_EQ(found[3].path, "spec.roles[0].resources");
}

TEST(ElasticEpUpdate, TheProfileStaysOnItsRole) {
    const auto found = of_rule(
        judge_update(with_spec(base_spec + "  roles: [{name: ep2, elasticEp: {width: 2}}]\n"),
                     with_spec(base_spec + "  roles: [{name: ep, elasticEp: {width: 2}}]\n")),
        "elastic-ep-update");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].path, "spec.roles[0].name");
    EXPECT_EQ(found[0].message, "elasticEp must stay on role `ep`, the role it was created with");
}

}  // namespace
}  // namespace mdadmit::test
