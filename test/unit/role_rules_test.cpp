// Section 4 of the rules contract: role shape and engine rules the operator itself enforces.
#include <gtest/gtest.h>

#include "support.hpp"

namespace mdadmit::test {
namespace {

using rules::Severity;

TEST(RoleKinds, ServerCannotBeCombinedWithDisaggregatedRoles) {
    const auto found =
        of_rule(judge(deployment("vLLM", "",
                                 "[{name: s}, {name: p, kind: Prefill}, {name: d, kind: Decode}]")),
                "role-kinds");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].severity, Severity::deny);
    EXPECT_EQ(found[0].path, "spec.roles[1].kind");
    EXPECT_EQ(found[0].message, "Server role `s` cannot be combined with Prefill role `p`");
}

TEST(RoleKinds, PrefillAndDecodeAppearOnce) {
    const auto found = of_rule(
        judge(deployment(
            "vLLM", "",
            "[{name: p, kind: Prefill}, {name: d1, kind: Decode}, {name: d2, kind: Decode}]")),
        "role-kinds");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].path, "spec.roles[2].kind");
    EXPECT_EQ(found[0].message, "Decode may appear once; roles `d1` and `d2` are both Decode");
}

TEST(RoleKinds, ManyServersOrOnePairAreFine) {
    EXPECT_TRUE(
        of_rule(judge(deployment("vLLM", "", "[{name: a}, {name: b}, {name: c}]")), "role-kinds")
            .empty());
    EXPECT_TRUE(of_rule(judge(deployment("vLLM", "",
                                         "[{name: p, kind: Prefill}, {name: d, kind: Decode}]")),
                        "role-kinds")
                    .empty());
}

TEST(RoleNames, DuplicatesAreRefused) {
    const auto found =
        of_rule(judge(deployment("vLLM", "", "[{name: a}, {name: a}]")), "role-names");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].path, "spec.roles[1].name");
    EXPECT_EQ(found[0].message, "role name `a` is also spec.roles[0].name");
}

TEST(RoleNames, DerivedServiceNamesMustBeDistinct) {
    // `md-router` is the router's Service; a role named `router` would take it.
    const auto routed =
        of_rule(judge(deployment("vLLM", "{name: vllm-router}", "[{name: router}]")), "role-names");
    ASSERT_EQ(routed.size(), 1u);
    EXPECT_EQ(routed[0].message,
              "Service name `md-router` of role `router` is also the router Service");
    // A multi-member role's per-replica Services `md-a-r0`... may collide with a role `a-r0`.
    const auto replicas =
        of_rule(judge(deployment("vLLM", "", "[{name: a, size: 2}, {name: a-r0}]")), "role-names");
    ASSERT_EQ(replicas.size(), 1u);
    EXPECT_EQ(replicas[0].path, "spec.roles[1].name");
    EXPECT_EQ(replicas[0].message,
              "Service name `md-a-r0` of role `a-r0` is also the Service of role `a`");
    EXPECT_TRUE(of_rule(judge(deployment("vLLM", "", "[{name: router}]")), "role-names").empty());
}

TEST(RoleNames, ServiceNamesAndHostnamesAreDnsLabels) {
    const std::string long_name(61, 'x');
    const auto service =
        of_rule(judge(deployment("vLLM", "", "[{name: " + long_name + "}]")), "role-names");
    ASSERT_EQ(service.size(), 1u);
    EXPECT_EQ(service[0].message.substr(0, 22), "Service name `md-xxxxx");
    const auto hostname =
        of_rule(judge(deployment("vLLM", "",
                                 "[{name: " + std::string(55, 'y') + ", replicas: 12, size: 2}]")),
                "role-names");
    ASSERT_EQ(hostname.size(), 1u);
    EXPECT_EQ(hostname[0].message, "member hostname `md-" + std::string(55, 'y') +
                                       "-r11-m1` is longer than 63 characters");
    EXPECT_TRUE(
        of_rule(judge(deployment("vLLM", "",
                                 "[{name: " + std::string(40, 'z') + ", replicas: 12, size: 2}]")),
                "role-names")
            .empty());
    // Members are addressed by hostname only when a replica has more than one.
    EXPECT_TRUE(
        of_rule(judge(deployment("vLLM", "",
                                 "[{name: " + std::string(55, 'y') + ", replicas: 12, size: 1}]")),
                "role-names")
            .empty());
}

TEST(RoleNames, AStoredRoleKeepsItsServiceName) {
    const std::string long_role = "[{name: " + std::string(61, 'x') + "}]";
    const std::string stored = deployment("vLLM", "", long_role);
    EXPECT_TRUE(of_rule(judge_update(deployment("vLLM", "{name: vllm-router}", long_role), stored),
                        "role-names")
                    .empty());
    // A role the update adds is judged.
    const auto added = of_rule(
        judge_update(deployment("vLLM", "", "[{name: s}, {name: " + std::string(61, 'w') + "}]"),
                     deployment("vLLM", "", "[{name: s}]")),
        "role-names");
    ASSERT_EQ(added.size(), 1u);
    EXPECT_EQ(added[0].path, "spec.roles[1].name");
}

TEST(Interface, AWholeNonNegativeCount) {
    for (const char* count : {"'1.5'", "'-1'", "'500m'"}) {
        const auto found = of_rule(
            judge(deployment("SGLang", "",
                             "[{name: s, resources: {interface: " + std::string(count) + "}}]")),
            "interface");
        ASSERT_EQ(found.size(), 1u) << count;
        EXPECT_EQ(found[0].path, "spec.roles[0].resources.interface");
        EXPECT_EQ(found[0].hint, "set resources.interface to a whole number, e.g. 1");
    }
    EXPECT_EQ(of_rule(judge(deployment("SGLang", "", "[{name: s, resources: {interface: '1.5'}}]")),
                      "interface")[0]
                  .message,
              "role `s` requests 1.5 fabric interfaces; the count is a whole number, 0 or more");
    for (const char* count : {"0", "'2'", "'1000m'"}) {
        EXPECT_TRUE(of_rule(judge(deployment(
                                "SGLang", "",
                                "[{name: s, resources: {interface: " + std::string(count) + "}}]")),
                            "interface")
                        .empty())
            << count;
    }
}

TEST(EngineOwnedEnv, OperatorSetVariablesAreRefusedPerEngine) {
    const auto found = of_rule(
        judge(deployment(
            "SGLang", "",
            "[{name: s, env: [{name: HF_HOME, value: /cache}, {name: MOONCAKE_MASTER, value: x}, "
            "{name: GPUSTACK_MEMBER_INDEX, value: '0'}, {name: VLLM_MOONCAKE_BOOTSTRAP_PORT, "
            "value: '1'}]}]")),
        "engine-owned-env");
    ASSERT_EQ(found.size(), 2u);
    EXPECT_EQ(found[0].path, "spec.roles[0].env[1]");
    EXPECT_EQ(found[0].message, "`MOONCAKE_MASTER` is set by the operator on every SGLang Pod");
    EXPECT_EQ(found[1].path, "spec.roles[0].env[2]");
}

TEST(EngineOwnedEnv, TakeOverRolesAreJudgedToo) {
    EXPECT_EQ(of_rule(judge(deployment(
                          "vLLM", "",
                          "[{name: s, command: [run], env: [{name: GPUSTACK_REPLICA_SIZE}]}]")),
                      "engine-owned-env")
                  .size(),
              1u);
}

TEST(Resources, APartitionAndASliceCannotBothApply) {
    const auto found =
        of_rule(judge(deployment("vLLM", "",
                                 "[{name: s, resources: {acceleratorPartitionedProfile: 1g.10gb, "
                                 "acceleratorSlicedMemoryPercentage: 50}}]")),
                "resources");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].path, "spec.roles[0].resources");
    EXPECT_TRUE(of_rule(judge(deployment(
                            "vLLM", "",
                            "[{name: s, resources: {acceleratorPartitionedProfile: 1g.10gb}}]")),
                        "resources")
                    .empty());
}

TEST(Resources, ANegativeCountOfAcceleratorsIsRefused) {
    const auto found = of_rule(
        judge(deployment("vLLM", "", "[{name: s, resources: {accelerator: '-1'}}]")), "resources");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].path, "spec.roles[0].resources.accelerator");
    EXPECT_EQ(found[0].message, "role `s` asks for -1 accelerators; a count is 0 or more");
    EXPECT_TRUE(of_rule(judge(deployment("vLLM", "", "[{name: s, resources: {accelerator: '0'}}]")),
                        "resources")
                    .empty());
}

TEST(EngineVersion, RequiredWhenARoleNamesNoImage) {
    std::string yaml =
        deployment("vLLM", "", "[{name: s, image: 'vllm/vllm-openai:v0.29.0'}, {name: t}]");
    yaml.replace(yaml.find(", version: \"1\""), 14, "");
    const auto found = of_rule(judge(yaml), "engine-version");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].path, "spec.engine.version");
    EXPECT_EQ(found[0].message,
              "spec.engine.version is required: role `t` names no image, so the operator picks one "
              "by engine version");
    std::string all_images =
        deployment("vLLM", "", "[{name: s, image: 'vllm/vllm-openai:v0.29.0'}]");
    all_images.replace(all_images.find(", version: \"1\""), 14, "");
    EXPECT_TRUE(of_rule(judge(all_images), "engine-version").empty());
}

TEST(KvCache, ThePoolIsRequired) {
    const auto found = of_rule(
        judge(deployment("vLLM", "", "[{name: s}]", "  kvCache: {poolRef: {}}\n")), "kv-cache");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].path, "spec.kvCache.poolRef.name");
    EXPECT_TRUE(
        of_rule(judge(deployment("vLLM", "", "[{name: s}]", "  kvCache: {poolRef: {name: p}}\n")),
                "kv-cache")
            .empty());
}

TEST(ServedModelName, MustBeExactlyTheModelName) {
    const auto other = of_rule(
        judge(deployment("vLLM", "", "[{name: s, extraArgs: [--served-model-name, chat]}]")),
        "served-model-name");
    ASSERT_EQ(other.size(), 1u);
    EXPECT_EQ(other[0].path, "spec.roles[0].extraArgs[1]");
    EXPECT_EQ(other[0].message,
              "--served-model-name `chat` on role `s` differs from spec.model.name `m`");
    const auto two = of_rule(
        judge(deployment("vLLM", "", "[{name: s, extraArgs: [--served-model-name, m, alias]}]")),
        "served-model-name");
    ASSERT_EQ(two.size(), 1u);
    EXPECT_EQ(two[0].path, "spec.roles[0].extraArgs[2]");
    EXPECT_EQ(two[0].message,
              "--served-model-name on role `s` names more than one model; the operator serves "
              "exactly one");
}

TEST(ServedModelName, SilentWhenEqualAbsentOrOnATakeOverRole) {
    EXPECT_TRUE(of_rule(judge(deployment(
                            "vLLM", "",
                            "[{name: s, extraArgs: ['--served-model-name=m', --port, '8000']}]")),
                        "served-model-name")
                    .empty());
    EXPECT_TRUE(of_rule(judge(deployment("vLLM", "", "[{name: s}]")), "served-model-name").empty());
    EXPECT_TRUE(
        of_rule(judge(deployment("vLLM", "",
                                 "[{name: s, command: [vllm, serve, --served-model-name, x]}]")),
                "served-model-name")
            .empty());
}

std::vector<rules::Finding> volumes(std::string_view entries) {
    return of_rule(judge(deployment(
                       "vLLM", "", "[{name: s, additionalVolumes: " + std::string(entries) + "}]")),
                   "volumes");
}

TEST(Volumes, EachVolumeNamesASource) {
    const auto found = volumes("[{name: models, mountPath: /models}]");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].severity, Severity::deny);
    EXPECT_EQ(found[0].path, "spec.roles[0].additionalVolumes[0]");
    EXPECT_EQ(found[0].message, "additional volume `models` of role `s` names no source");
    EXPECT_EQ(found[0].hint,
              "add one source, e.g. persistentVolumeClaim: {claimName: models} or hostPath: "
              "{path: /data}");
}

TEST(Volumes, MountPathsAreUniqueWithinARole) {
    const auto found = volumes(
        "[{name: a, mountPath: /models, hostPath: {path: /a}}, {name: b, mountPath: /models/, "
        "emptyDir: {}}]");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].path, "spec.roles[0].additionalVolumes[1].mountPath");
    EXPECT_EQ(found[0].message,
              "additional volume `b` mounts at `/models/`, as does "
              "spec.roles[0].additionalVolumes[0].mountPath");
}

TEST(Volumes, SubPathStaysInsideTheVolume) {
    const auto found =
        volumes("[{name: a, mountPath: /m, subPath: 'cache/../../etc', hostPath: {path: /a}}]");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].path, "spec.roles[0].additionalVolumes[0].subPath");
    EXPECT_EQ(found[0].message,
              "additional volume `a` has subPath `cache/../../etc`, whose '..' segment reaches "
              "outside the volume");
}

TEST(Volumes, WellFormedVolumesAreAdmitted) {
    EXPECT_TRUE(volumes("[{name: a, mountPath: /a, subPath: 'x..y/z', persistentVolumeClaim: "
                        "{claimName: c}}, {name: b, mountPath: /b, csi: {driver: d}}]")
                    .empty());
    // Two roles may mount at the same path: each is its own Pod.
    EXPECT_TRUE(of_rule(judge(deployment("vLLM", "",
                                         "[{name: a, additionalVolumes: [{name: v, mountPath: "
                                         "/m, emptyDir: {}}]}, {name: b, additionalVolumes: "
                                         "[{name: v, mountPath: /m, emptyDir: {}}]}]")),
                        "volumes")
                    .empty());
}

TEST(Volumes, OneSourceAndOneNamePerVolume) {
    const auto found = volumes(
        "[{name: a, mountPath: /a, hostPath: {path: /a}, emptyDir: {}}, {name: a, mountPath: /b, "
        "emptyDir: {}}]");
    ASSERT_EQ(found.size(), 2u);
    EXPECT_EQ(found[0].path, "spec.roles[0].additionalVolumes[0]");
    EXPECT_EQ(found[0].message,
              "additional volume `a` of role `s` names 2 sources (`hostPath` and `emptyDir`); a "
              "volume has one");
    EXPECT_EQ(found[1].path, "spec.roles[0].additionalVolumes[1].name");
    EXPECT_EQ(found[1].message,
              "additional volume `a` has the name of spec.roles[0].additionalVolumes[0].name; "
              "volume names are unique within a Pod");
}

TEST(Volumes, SubPathsAreRelativeAndInside) {
    for (const std::string sub_path : {"..", "../x", "a/..", "a/../b"}) {
        EXPECT_EQ(
            volumes("[{name: a, mountPath: /m, subPath: '" + sub_path + "', emptyDir: {}}]").size(),
            1u)
            << sub_path;
    }
    const auto absolute = volumes("[{name: a, mountPath: /m, subPath: /etc, emptyDir: {}}]");
    ASSERT_EQ(absolute.size(), 1u);
    EXPECT_EQ(absolute[0].message,
              "additional volume `a` has subPath `/etc`, an absolute path; it is relative to the "
              "volume's root");
    const auto expression =
        volumes("[{name: a, mountPath: /m, subPathExpr: '$(POD)/..', emptyDir: {}}]");
    ASSERT_EQ(expression.size(), 1u);
    EXPECT_EQ(expression[0].path, "spec.roles[0].additionalVolumes[0].subPathExpr");
}

TEST(ServedModelName, VllmReadsUnderscoreSpellings) {
    const auto found = of_rule(
        judge(deployment("vLLM", "", "[{name: s, extraArgs: [--served_model_name, other]}]")),
        "served-model-name");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].path, "spec.roles[0].extraArgs[1]");
}

}  // namespace
}  // namespace mdadmit::test
