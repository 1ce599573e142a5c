// What a role may reach on its node and in its Pod: topology, host access, artifact paths.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "mdadmit/rules/rule_data.hpp"
#include "support.hpp"

namespace mdadmit::test {
namespace {

using rules::Severity;

std::vector<rules::Finding> judged(std::string_view rule, std::string_view roles,
                                   std::string_view extra = "") {
    return of_rule(judge(deployment("vLLM", "", roles, extra)), rule);
}

TEST(Topology, TheRequiredLevelIsALabelKeyOtherThanTheHostname) {
    for (const char* level : {"topology.kubernetes.io/zone", "rack", "example.com/rack-1"}) {
        EXPECT_TRUE(judged("topology",
                           "[{name: s, topology: {requiredLevel: '" + std::string(level) + "'}}]")
                        .empty())
            << level;
    }
    const auto malformed = judged("topology", "[{name: s, topology: {requiredLevel: 'a/b/c'}}]");
    ASSERT_EQ(malformed.size(), 1u);
    EXPECT_EQ(malformed[0].severity, Severity::deny);
    EXPECT_EQ(malformed[0].path, "spec.roles[0].topology.requiredLevel");
    EXPECT_EQ(malformed[0].message, "`a/b/c` on role `s` is not a topology label key");
    EXPECT_EQ(malformed[0].hint, "name a node label key, e.g. topology.kubernetes.io/zone");
    for (const char* bad : {"-rack", "Example.com/rack", "/rack", "rack_", "zone/"}) {
        EXPECT_EQ(
            judged("topology", "[{name: s, topology: {requiredLevel: '" + std::string(bad) + "'}}]")
                .size(),
            1u)
            << bad;
    }
    const auto hostname =
        judged("topology", "[{name: s, topology: {requiredLevel: kubernetes.io/hostname}}]");
    ASSERT_EQ(hostname.size(), 1u);
    EXPECT_EQ(hostname[0].message,
              "kubernetes.io/hostname cannot be required: a replica's members are not kept on "
              "one Node");
}

TEST(HostAccess, PrivilegedRolesAndHostPathsAreOffByDefault) {
    const auto found = judged("host-access",
                              "[{name: s, privileged: true, additionalVolumes: [{name: d, "
                              "mountPath: /driver, hostPath: {path: /usr/local/driver}}]}]");
    ASSERT_EQ(found.size(), 2u);
    EXPECT_EQ(found[0].path, "spec.roles[0].privileged");
    EXPECT_EQ(found[0].message, "role `s` asks for privileged mode, which is off");
    EXPECT_EQ(found[0].hint, "remove privileged, or allow it with the privilegedAllowed setting");
    EXPECT_EQ(found[1].path, "spec.roles[0].additionalVolumes[0].hostPath");
    EXPECT_EQ(found[1].message,
              "role `s` mounts host path `/usr/local/driver`; host paths are off");
    EXPECT_TRUE(judged("host-access",
                       "[{name: s, privileged: false, additionalVolumes: [{name: "
                       "d, mountPath: /d, configMap: {name: c}}]}]")
                    .empty());
}

TEST(HostAccess, TheSettingsOpenEachGate) {
    auto data = rules::embedded_rule_data();
    data.settings.privileged_allowed = true;
    data.settings.host_path_volume_allowed = true;
    const auto engine = rules::Engine::create(std::move(data)).value();
    const auto value = boost::json::parse(R"({"spec": {"model": {"name": "m"},
        "engine": {"name": "vLLM", "version": "1"},
        "roles": [{"name": "s", "privileged": true,
                   "additionalVolumes": [{"mountPath": "/d", "hostPath": {"path": "/srv"}}]}]}})");
    EXPECT_TRUE(engine.evaluate({value}).findings.empty());
}

TEST(HostAccess, AccessAStoredRoleHeldIsKept) {
    const std::string spec = "  model: {name: m}\n  engine: {name: vLLM, version: \"1\"}\n";
    const auto object = [&](std::string_view roles) {
        return "kind: ModelDeployment\nmetadata: {name: md, namespace: ns}\nspec:\n" + spec +
               "  roles: " + std::string(roles) + "\n";
    };
    const std::string held =
        "[{name: s, privileged: true, additionalVolumes: [{mountPath: /d, hostPath: {path: "
        "/srv}}]}]";
    // The same access, a narrower path, or a read-only mount of it stays admitted.
    for (const char* now :
         {"[{name: s, replicas: 2, privileged: true, additionalVolumes: [{mountPath: /d, "
          "hostPath: {path: /srv}}]}]",
          "[{name: s, privileged: true, additionalVolumes: [{mountPath: /d, readOnly: true, "
          "hostPath: {path: /srv/models}}]}]"}) {
        EXPECT_TRUE(of_rule(judge_update(object(now), object(held)), "host-access").empty()) << now;
    }
    // A wider path, another role, or a new role is judged.
    const auto wider = of_rule(judge_update(object("[{name: s, privileged: true, "
                                                   "additionalVolumes: [{mountPath: /d, "
                                                   "hostPath: {path: /}}]}]"),
                                            object(held)),
                               "host-access");
    ASSERT_EQ(wider.size(), 1u);
    EXPECT_EQ(wider[0].path, "spec.roles[0].additionalVolumes[0].hostPath");
    // What the object cannot say (an empty path, a `..` segment, a subPathExpr the kubelet
    // expands) is neither held nor covered.
    for (const auto& [now, then] : {
             std::pair{"hostPath: {path: /srv}", "hostPath: {path: ''}"},
             std::pair{"hostPath: {path: /srv/../etc}", "hostPath: {path: /srv}"},
             std::pair{"subPathExpr: $(POD), hostPath: {path: /srv}", "hostPath: {path: /srv}"},
         }) {
        const auto with_volume = [&](std::string_view volume) {
            return object("[{name: s, additionalVolumes: [{mountPath: /d, " + std::string(volume) +
                          "}]}]");
        };
        EXPECT_EQ(of_rule(judge_update(with_volume(now), with_volume(then)), "host-access").size(),
                  1u)
            << now;
    }
    const auto renamed =
        of_rule(judge_update(object("[{name: t, privileged: true}]"), object(held)), "host-access");
    ASSERT_EQ(renamed.size(), 1u);
    EXPECT_EQ(renamed[0].path, "spec.roles[0].privileged");
}

TEST(ArtifactRef, FlagsAndEnvironmentTheOperatorRendersForTheArtifact) {
    const std::string artifact = "  model: {name: m, artifactRef: {name: qwen}}\n";
    const auto object = [&](std::string_view engine, std::string_view roles) {
        return "kind: ModelDeployment\nmetadata: {name: md, namespace: ns}\nspec:\n" + artifact +
               "  engine: {name: " + std::string(engine) +
               ", version: \"1\"}\n  roles: " + std::string(roles) + "\n";
    };
    const auto found =
        of_rule(judge(object("vLLM",
                             "[{name: s, extraArgs: [--revision, v2, '--model=/x', "
                             "--max-model-len, '4096', --download_dir, /tmp], env: "
                             "[{name: HF_TOKEN, value: t}, {name: HTTPS_PROXY, "
                             "value: p}, {name: VLLM_USE_MODELSCOPE, value: '1'}]}]")),
                "artifact-ref");
    ASSERT_EQ(found.size(), 5u);
    EXPECT_EQ(found[0].path, "spec.roles[0].extraArgs[0]");
    EXPECT_EQ(found[0].message,
              "`--revision` is set by the operator while spec.model.artifactRef names the "
              "weights: the artifact fixes the revision of the weights");
    EXPECT_EQ(found[0].hint, "remove it, or take the role over with `command`");
    EXPECT_EQ(found[1].path, "spec.roles[0].extraArgs[2]");
    EXPECT_EQ(found[2].path, "spec.roles[0].extraArgs[5]");
    EXPECT_EQ(found[3].path, "spec.roles[0].env[0]");
    EXPECT_EQ(found[4].path, "spec.roles[0].env[2]");
    // Per engine: SGLang's --model-path and SGLANG_USE_MODELSCOPE, not vLLM's variable.
    const auto sglang =
        of_rule(judge(object("SGLang",
                             "[{name: s, extraArgs: [--model-path, /x], env: [{name: "
                             "VLLM_USE_MODELSCOPE, value: '1'}, {name: "
                             "SGLANG_USE_MODELSCOPE, value: '1'}]}]")),
                "artifact-ref");
    ASSERT_EQ(sglang.size(), 2u);
    EXPECT_EQ(sglang[0].path, "spec.roles[0].extraArgs[0]");
    EXPECT_EQ(sglang[1].path, "spec.roles[0].env[1]");
    // A take-over role owns its command line; without an artifact nothing is owned.
    EXPECT_TRUE(of_rule(judge(object("vLLM",
                                     "[{name: s, command: [vllm, serve, --revision, v2], "
                                     "env: [{name: HF_TOKEN, value: t}]}]")),
                        "artifact-ref")
                    .empty());
    EXPECT_TRUE(judged("artifact-ref",
                       "[{name: s, extraArgs: [--revision, v2], env: [{name: "
                       "HF_TOKEN, value: t}]}]")
                    .empty());
}

TEST(ArtifactRef, NoVolumeMountsOverTheWeights) {
    const auto object = [](std::string_view mount, std::string_view model) {
        return "kind: ModelDeployment\nmetadata: {name: md, namespace: ns}\nspec:\n  model: " +
               std::string(model) +
               "\n  engine: {name: vLLM, version: \"1\"}\n  roles: [{name: s, "
               "command: [run], additionalVolumes: [{mountPath: '" +
               std::string(mount) + "', configMap: {name: c}}]}]\n";
    };
    const std::string with_artifact = "{name: m, artifactRef: {name: qwen}}";
    for (const char* refused : {"/var/lib/gpustack/model", "/var/lib/gpustack/model/tokenizer",
                                "/var/lib/gpustack", "/var/lib/gpustack/model-cache/", "/"}) {
        const auto found = of_rule(judge(object(refused, with_artifact)), "artifact-ref");
        ASSERT_EQ(found.size(), 1u) << refused;
        EXPECT_EQ(found[0].path, "spec.roles[0].additionalVolumes[0].mountPath");
    }
    EXPECT_EQ(
        of_rule(judge(object("/var/lib/gpustack/model", with_artifact)), "artifact-ref")[0].message,
        "`/var/lib/gpustack/model` overlaps `/var/lib/gpustack/model`, where the operator "
        "mounts the artifact's weights");
    for (const char* admitted : {"/var/lib/gpustack/models", "/data", "/var/lib/gpustack-x"}) {
        EXPECT_TRUE(of_rule(judge(object(admitted, with_artifact)), "artifact-ref").empty())
            << admitted;
    }
    EXPECT_TRUE(
        of_rule(judge(object("/var/lib/gpustack/model", "{name: m}")), "artifact-ref").empty());
}

}  // namespace
}  // namespace mdadmit::test
