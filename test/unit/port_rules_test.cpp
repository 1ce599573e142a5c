// Section 3 of the rules contract: one serving port for every routed role.
#include <gtest/gtest.h>

#include "support.hpp"

namespace mdadmit::test {
namespace {

using rules::Severity;

TEST(PortUniformity, ListsEveryRoleWithItsPortAndWhereItCameFrom) {
    const auto found = of_rule(judge(deployment("vLLM", "{name: vllm-router}",
                                                "[{name: a, ports: [{port: 9000}]}, {name: b, "
                                                "extraArgs: [--port, '9001']}, {name: c}]")),
                               "port-uniformity");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].severity, Severity::deny);
    EXPECT_EQ(found[0].path, "spec.router");
    EXPECT_EQ(found[0].message, "routed roles serve on different ports: a 9000, b 9001, c 8000");
}

TEST(PortUniformity, SilentOnASharedCustomPortOrWithoutARouter) {
    EXPECT_TRUE(
        judge(
            deployment("vLLM", "{name: vllm-router}",
                       "[{name: a, ports: [{port: 9000}]}, {name: b, extraArgs: ['--port=9000']}]"))
            .findings.empty());
    EXPECT_TRUE(judge(deployment("vLLM", "", "[{name: a, ports: [{port: 9000}]}, {name: b}]"))
                    .findings.empty());
}

TEST(PortUniformity, ADecoderBehindTheSidecarServesOnItsPublishedPort) {
    // --port 8200 is the engine's port behind the llm-d decode sidecar; the sidecar serves 8000.
    EXPECT_TRUE(
        judge(
            deployment(
                "vLLM", "{name: llm-d-router}",
                "[{name: p, kind: Prefill}, {name: d, kind: Decode, extraArgs: [--port, '8200']}]"))
            .findings.empty());
}

TEST(PortUniformity, RefusesTlsAndNonTcpServingPorts) {
    const auto found = of_rule(
        judge(deployment("vLLM", "{name: vllm-router}",
                         "[{name: a, ports: [{port: 8000, protocol: UDP}]}, {name: b, extraArgs: "
                         "[--ssl-keyfile, /k.pem]}]")),
        "port-uniformity");
    ASSERT_EQ(found.size(), 2u);
    EXPECT_EQ(found[0].path, "spec.roles[0].ports[0].protocol");
    EXPECT_EQ(found[0].message, "serving port of role `a` uses UDP; routed roles serve over TCP");
    EXPECT_EQ(found[1].path, "spec.roles[1].extraArgs[0]");
    EXPECT_EQ(found[1].message, "role `b` passes `--ssl-keyfile`; routed roles serve plain HTTP");
}

TEST(MultiportRefused, RefusesMultiPortMode) {
    const auto found = of_rule(
        judge(deployment("vLLM", "", "[{name: s, extraArgs: [--data-parallel-size, '4', -dpm]}]")),
        "multiport-refused");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].severity, Severity::deny);
    EXPECT_EQ(found[0].path, "spec.roles[0].extraArgs[2]");
    EXPECT_EQ(found[0].message,
              "`-dpm` starts vLLM's MultiPort mode, which serves on extra, incremented ports");
}

TEST(MultiportRefused, RefusesConflictingBalanceShapes) {
    const auto found = of_rule(
        judge(deployment("vLLM", "", "[{name: s, extraArgs: [-dpe, --data-parallel-hybrid-lb]}]")),
        "multiport-refused");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].path, "spec.roles[0].extraArgs[1]");
    EXPECT_EQ(found[0].message,
              "`--data-parallel-hybrid-lb` and `-dpe` derive different data-parallel "
              "load-balancing shapes");
}

TEST(MultiportRefused, TakeOverRolesAndSGLangAreNotJudged) {
    EXPECT_TRUE(judge(deployment("vLLM", "", "[{name: s, command: [vllm, serve, m, -dpm]}]"))
                    .findings.empty());
    EXPECT_TRUE(judge(deployment("SGLang", "", "[{name: s, extraArgs: [-dpm]}]")).findings.empty());
    EXPECT_TRUE(judge(deployment("vLLM", "", "[{name: s, extraArgs: [-dpe]}]")).findings.empty());
}

const char* llm_d = "{name: llm-d-router}";

TEST(DecoderProxyPort, RefusesTheSidecarsPublishedPort) {
    const auto found = of_rule(
        judge(deployment(
            "vLLM", llm_d,
            "[{name: p, kind: Prefill, ports: [{port: 9000}]}, {name: d, kind: Decode, ports: "
            "[{port: 9000}], extraArgs: [--port, '9000']}]")),
        "decoder-proxy-port");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].severity, Severity::deny);
    EXPECT_EQ(found[0].path, "spec.roles[1].extraArgs[1]");
    EXPECT_EQ(found[0].message,
              "--port 9000 on Decode role `d` is the port its decode sidecar publishes; vLLM "
              "listens behind it");
    EXPECT_EQ(found[0].hint, "remove --port (vLLM then listens on 8200) or choose another port");
}

TEST(DecoderProxyPort, DefaultPublishedPortIs8000) {
    EXPECT_EQ(
        of_rule(
            judge(deployment(
                "vLLM", llm_d,
                "[{name: p, kind: Prefill}, {name: d, kind: Decode, extraArgs: ['--port=8000']}]")),
            "decoder-proxy-port")
            .size(),
        1u);
}

TEST(DecoderProxyPort, SilentOffLlmDOnSGLangAndOnTakeOverDecoders) {
    const char* roles =
        "[{name: p, kind: Prefill}, {name: d, kind: Decode, extraArgs: ['--port=8000']}]";
    EXPECT_TRUE(
        of_rule(judge(deployment("vLLM", "{name: vllm-router}", roles)), "decoder-proxy-port")
            .empty());
    EXPECT_TRUE(of_rule(judge(deployment("SGLang", llm_d, roles)), "decoder-proxy-port").empty());
    EXPECT_TRUE(of_rule(judge(deployment(
                            "vLLM", llm_d,
                            "[{name: p, kind: Prefill}, {name: d, kind: Decode, command: [vllm, "
                            "serve, --port, '8000']}]")),
                        "decoder-proxy-port")
                    .empty());
}

TEST(DeclaredPortMismatch, FiresWhenPortsAndFlagDisagree) {
    const auto found = of_rule(
        judge(deployment("SGLang", "",
                         "[{name: s, ports: [{port: 30000}], extraArgs: [--port, '30001']}]")),
        "declared-port-mismatch");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].severity, Severity::deny);
    EXPECT_EQ(found[0].path, "spec.roles[0].extraArgs[1]");
    EXPECT_EQ(found[0].message, "--port 30001 differs from the port role `s` declares (30000)");
}

TEST(DeclaredPortMismatch, JudgesTakeOverCommandsToo) {
    const auto found =
        of_rule(judge(deployment(
                    "vLLM", "",
                    "[{name: s, ports: [{port: 9000}], command: [vllm, serve, '--port=9001']}]")),
                "declared-port-mismatch");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].path, "spec.roles[0].command[2]");
}

TEST(DeclaredPortMismatch, SilentWhenEqualAndForTheProxyFrontedDecoder) {
    EXPECT_TRUE(judge(deployment("vLLM", "",
                                 "[{name: s, ports: [{port: 9000}], extraArgs: [--port, '9000']}]"))
                    .findings.empty());
    EXPECT_TRUE(of_rule(judge(deployment(
                            "vLLM", llm_d,
                            "[{name: p, kind: Prefill}, {name: d, kind: Decode, ports: [{port: "
                            "8000}], extraArgs: [--port, '8200']}]")),
                        "declared-port-mismatch")
                    .empty());
}

TEST(ReservedPort, KvEventPortsUnderLlmDOnNonDecodeVllmRoles) {
    const auto found = of_rule(
        judge(deployment("vLLM", llm_d,
                         "[{name: s, ports: [{port: 8000}, {port: 5557}]}, {name: t, extraArgs: "
                         "[--port, '5558']}]")),
        "reserved-port");
    ASSERT_EQ(found.size(), 2u);
    EXPECT_EQ(found[0].severity, Severity::deny);
    EXPECT_EQ(found[0].path, "spec.roles[0].ports[1]");
    EXPECT_EQ(found[0].message,
              "port 5557 is reserved on Server role `s`: the operator binds it for KV-cache events "
              "under llm-d-router");
    EXPECT_EQ(found[1].path, "spec.roles[1].extraArgs[1]");
    // A role that declares ports serves on them: its --port is declared-port-mismatch's.
    EXPECT_TRUE(of_rule(judge(deployment("vLLM", llm_d,
                                         "[{name: s, ports: [{port: 8000}], extraArgs: [--port, "
                                         "'5558']}]")),
                        "reserved-port")
                    .empty());
}

TEST(ReservedPort, BootstrapPortOnThePrefillOfAPair) {
    const char* roles =
        "[{name: p, kind: Prefill, ports: [{port: 8998}]}, {name: d, kind: Decode, ports: [{port: "
        "8998}]}]";
    // vLLM binds the bootstrap port only behind a router.
    EXPECT_TRUE(of_rule(judge(deployment("vLLM", "", roles)), "reserved-port").empty());
    const auto vllm =
        of_rule(judge(deployment("vLLM", "{name: vllm-router}", roles)), "reserved-port");
    ASSERT_EQ(vllm.size(), 1u);
    EXPECT_EQ(vllm[0].path, "spec.roles[0].ports[0]");
    const auto sglang_routed =
        of_rule(judge(deployment("SGLang", "{name: sglang-gateway}", roles)), "reserved-port");
    ASSERT_EQ(sglang_routed.size(), 1u);
    EXPECT_EQ(sglang_routed[0].message,
              "port 8998 is reserved on Prefill role `p`: the operator binds it as the "
              "disaggregation bootstrap port");
    EXPECT_EQ(
        of_rule(judge(deployment("SGLang", "", roles, "  kvCache: {poolRef: {name: pool}}\n")),
                "reserved-port")
            .size(),
        1u);
}

TEST(ReservedPort, SilentWhereTheOperatorBindsNothing) {
    // SGLang pair with neither router nor kvCache; a Decode role; 5557 off llm-d; take-over roles.
    EXPECT_TRUE(
        of_rule(judge(deployment(
                    "SGLang", "",
                    "[{name: p, kind: Prefill, ports: [{port: 8998}]}, {name: d, kind: Decode}]")),
                "reserved-port")
            .empty());
    EXPECT_TRUE(of_rule(judge(deployment("vLLM", llm_d,
                                         "[{name: p, kind: Prefill}, {name: d, kind: Decode, "
                                         "extraArgs: [--port, '5557']}]")),
                        "reserved-port")
                    .empty());
    EXPECT_TRUE(of_rule(judge(deployment("vLLM", "{name: vllm-router}",
                                         "[{name: s, ports: [{port: 5557}]}]")),
                        "reserved-port")
                    .empty());
    EXPECT_TRUE(
        of_rule(judge(deployment("vLLM", llm_d,
                                 "[{name: s, ports: [{port: 5557}], command: [vllm, serve]}]")),
                "reserved-port")
            .empty());
}

}  // namespace
}  // namespace mdadmit::test
