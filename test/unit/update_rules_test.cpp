// Section 5 of the rules contract: UPDATE judged against oldObject, and the ratchets.
#include <gtest/gtest.h>

#include "support.hpp"

namespace mdadmit::test {
namespace {

using rules::Severity;

const std::string base_spec =
    "  model: {name: m, artifactRef: {name: a1}}\n"
    "  engine: {name: vLLM, version: \"1\"}\n"
    "  router: {name: vllm-router}\n";

std::vector<rules::Finding> immutable(std::string_view spec, std::string_view old_spec) {
    return of_rule(judge_update(with_spec(spec), with_spec(old_spec)), "immutable");
}

TEST(Immutable, EditableFieldsMayChange) {
    const std::string before = base_spec + "  roles: [{name: s, replicas: 1}]\n";
    const std::string after =
        "  model: {name: m, artifactRef: {name: a1}}\n"
        "  engine: {name: vllm, version: \"2\"}\n"
        "  router: {name: vllm-router, replicas: 3, extraArgs: [--policy, random]}\n"
        "  roles: [{name: s, replicas: 4, image: x, extraArgs: [--enforce-eager]}]\n";
    EXPECT_TRUE(immutable(after, before).empty());
}

TEST(Immutable, ModelEngineAndKvCacheAreFrozen) {
    const std::string before = base_spec + "  roles: [{name: s}]\n";
    const std::string after =
        "  model: {name: m2, artifactRef: {name: a1}}\n"
        "  engine: {name: SGLang, version: \"1\"}\n"
        "  router: {name: vllm-router}\n"
        "  kvCache: {poolRef: {name: pool}}\n"
        "  roles: [{name: s}]\n";
    const auto found = immutable(after, before);
    ASSERT_EQ(found.size(), 3u);
    EXPECT_EQ(found[0].severity, Severity::deny);
    EXPECT_EQ(found[0].path, "spec.model.name");
    EXPECT_EQ(found[0].message, "spec.model.name cannot change after creation (was `\"m\"`)");
    EXPECT_EQ(found[1].path, "spec.engine.name");
    EXPECT_EQ(found[1].message, "spec.engine.name cannot change from `vLLM` to `SGLang`");
    EXPECT_EQ(found[2].path, "spec.kvCache");
    EXPECT_EQ(found[2].message, "spec.kvCache cannot be added after creation (was unset)");
    EXPECT_EQ(found[2].hint, "remove spec.kvCache");
}

TEST(Immutable, TheKvCacheCannotBeRemovedOrRepointed) {
    const std::string roles = "  roles: [{name: s}]\n";
    const std::string with_pool = base_spec + "  kvCache: {poolRef: {name: pool}}\n" + roles;
    const auto removed = immutable(base_spec + roles, with_pool);
    ASSERT_EQ(removed.size(), 1u);
    EXPECT_EQ(
        removed[0].message,
        "spec.kvCache cannot be removed after creation (was `{\"poolRef\":{\"name\":\"pool\"}}`)");
    EXPECT_EQ(removed[0].hint, "restore spec.kvCache to its old value");
    const auto repointed =
        immutable(base_spec + "  kvCache: {poolRef: {name: other}}\n" + roles, with_pool);
    ASSERT_EQ(repointed.size(), 1u);
    EXPECT_NE(repointed[0].message.find("cannot be changed"), std::string::npos);
}

TEST(Immutable, AnOmittedKindIsServer) {
    EXPECT_TRUE(immutable(base_spec + "  roles: [{name: s, kind: Server}]\n",
                          base_spec + "  roles: [{name: s}]\n")
                    .empty());
}

TEST(Immutable, ArtifactRefIsPartOfTheModel) {
    const std::string before = base_spec + "  roles: [{name: s}]\n";
    const std::string after =
        "  model: {name: m}\n  engine: {name: vLLM, version: \"1\"}\n"
        "  router: {name: vllm-router}\n  roles: [{name: s}]\n";
    const auto found = immutable(after, before);
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].path, "spec.model.artifactRef");
    EXPECT_EQ(found[0].message,
              "spec.model.artifactRef cannot change after creation (was `{\"name\":\"a1\"}`)");
}

TEST(Immutable, RoleNamesAndKindsAreFrozen) {
    const std::string before =
        base_spec + "  roles: [{name: p, kind: Prefill}, {name: d, kind: Decode}]\n";
    const std::string after =
        base_spec + "  roles: [{name: p, kind: Decode}, {name: d2, kind: Decode}]\n";
    const auto found = immutable(after, before);
    ASSERT_EQ(found.size(), 2u);
    EXPECT_EQ(found[0].path, "spec.roles[0].kind");
    EXPECT_EQ(found[0].message, "role `p` cannot change kind from Prefill to Decode");
    EXPECT_EQ(found[1].path, "spec.roles");
    EXPECT_EQ(found[1].message,
              "the set of role names cannot change; this update adds `d2` and removes `d`");
    // Reordering the same roles changes nothing.
    EXPECT_TRUE(immutable(base_spec + "  roles: [{name: d, kind: Decode}, {name: p, kind: "
                                      "Prefill}]\n",
                          before)
                    .empty());
}

TEST(Immutable, TheRouterMayComeAndGoButNotBeRenamed) {
    const std::string roles = "  roles: [{name: s}]\n";
    const std::string vllm_router = base_spec + roles;
    const std::string no_router =
        "  model: {name: m, artifactRef: {name: a1}}\n  engine: {name: vLLM, version: \"1\"}\n" +
        roles;
    const std::string llm_d =
        "  model: {name: m, artifactRef: {name: a1}}\n  engine: {name: vLLM, version: \"1\"}\n"
        "  router: {name: llm-d-router}\n" +
        roles;
    EXPECT_TRUE(immutable(no_router, vllm_router).empty());
    EXPECT_TRUE(immutable(vllm_router, no_router).empty());
    const auto found = immutable(llm_d, vllm_router);
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].path, "spec.router.name");
    EXPECT_EQ(found[0].message,
              "spec.router.name cannot change in place from `vllm-router` to `llm-d-router`");
}

TEST(Immutable, CreateIsNotJudgedAgainstAnything) {
    EXPECT_TRUE(
        of_rule(judge(with_spec(base_spec + "  roles: [{name: s}]\n")), "immutable").empty());
}

// The operator ratchets each rule on the parts it reads: a stored role keeps a reserved
// --port, a served model name, and a --port that differs from its declared port while those
// parts stay as they were, so an object admitted under older rules stays editable elsewhere.
TEST(Ratchets, EachRuleRatchetsOnThePartsItReads) {
    const std::string spec =
        "  model: {name: m}\n  engine: {name: vLLM, version: \"1\"}\n"
        "  router: {name: llm-d-router}\n";
    const auto with_role = [&](const std::string& role) {
        return with_spec(spec + "  roles: [" + role + "]\n");
    };
    const std::string before =
        with_role("{name: s, extraArgs: [--port, '5557', --served-model-name, x]}");
    EXPECT_EQ(rule_paths(judge(before)),
              (std::vector<std::string>{"reserved-port@spec.roles[0].extraArgs[1]",
                                        "served-model-name@spec.roles[0].extraArgs[3]"}));
    EXPECT_TRUE(judge_update(with_role("{name: s, replicas: 3, extraArgs: [--port, '5557', "
                                       "--served-model-name, x, --enforce-eager]}"),
                             before)
                    .findings.empty());
    EXPECT_EQ(
        rule_paths(judge_update(
            with_role("{name: s, extraArgs: [--port, '5557', --served-model-name, y]}"), before)),
        (std::vector<std::string>{"served-model-name@spec.roles[0].extraArgs[3]"}));
    EXPECT_EQ(
        rule_paths(judge_update(
            with_role("{name: s, extraArgs: [--port, '5558', --served-model-name, x]}"), before)),
        (std::vector<std::string>{"reserved-port@spec.roles[0].extraArgs[1]"}));
    // A declared reserved port is judged on every update, as the operator judges it.
    const std::string declared = with_role("{name: s, ports: [{port: 5557}]}");
    EXPECT_EQ(rule_paths(judge_update(with_role("{name: s, replicas: 2, ports: [{port: 5557}]}"),
                                      declared)),
              (std::vector<std::string>{"reserved-port@spec.roles[0].ports[0]"}));
}

TEST(Ratchets, ADeclaredPortMismatchIsKeptWhilePortsAndArgumentsStay) {
    const std::string spec = "  model: {name: m}\n  engine: {name: vLLM, version: \"1\"}\n";
    const auto with_role = [&](const std::string& role) {
        return with_spec(spec + "  roles: [" + role + "]\n");
    };
    const std::string before =
        with_role("{name: s, ports: [{port: 8000}], extraArgs: [--port, '8100']}");
    EXPECT_EQ(rule_paths(judge(before)),
              (std::vector<std::string>{"declared-port-mismatch@spec.roles[0].extraArgs[1]"}));
    EXPECT_TRUE(judge_update(with_role("{name: s, replicas: 2, ports: [{port: 8000}], extraArgs: "
                                       "[--port, '8100']}"),
                             before)
                    .findings.empty());
    EXPECT_EQ(rule_paths(judge_update(with_role("{name: s, ports: [{port: 8000}], extraArgs: "
                                                "[--port, '8100', --enforce-eager]}"),
                                      before)),
              (std::vector<std::string>{"declared-port-mismatch@spec.roles[0].extraArgs[1]"}));
}

TEST(Ratchets, AReorderedRoleIsMatchedByName) {
    const std::string spec =
        "  model: {name: m}\n  engine: {name: vLLM, version: \"1\"}\n  router: {name: "
        "llm-d-router}\n";
    const std::string legacy = "{name: s, extraArgs: [--served-model-name, x]}";
    const auto update = judge_update(with_spec(spec + "  roles: [{name: t}, " + legacy + "]\n"),
                                     with_spec(spec + "  roles: [" + legacy + ", {name: t}]\n"));
    EXPECT_TRUE(of_rule(update, "served-model-name").empty());
}

// Removing the finalizers of an object being deleted must work even when the object breaks a
// rule it was admitted before: its findings are reported as warnings.
TEST(Deletion, AnUnchangedSpecBeingDeletedIsNeverBlocked) {
    const std::string spec =
        "  model: {name: m}\n  engine: {name: vLLM, version: \"1\"}\n"
        "  roles: [{name: s, extraArgs: [--kv-transfer-config, '{}']}]\n";
    const std::string deleting =
        "apiVersion: worker.gpustack.ai/v1\nkind: ModelDeployment\n"
        "metadata: {name: md, namespace: ns, deletionTimestamp: '2026-12-01T00:00:00Z'}\nspec:\n" +
        spec;
    const auto finalizers_removed = judge_update(deleting, with_spec(spec));
    EXPECT_TRUE(finalizers_removed.allowed());
    const auto found = of_rule(finalizers_removed, "engine-owned-args");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].severity, Severity::warn);
    // A spec changed while deleting is judged as usual.
    const std::string changed = deleting + "  kvCache: {poolRef: {name: pool}}\n";
    EXPECT_FALSE(judge_update(changed, with_spec(spec)).allowed());
}

}  // namespace
}  // namespace mdadmit::test
