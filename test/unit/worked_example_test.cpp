// The worked examples at the end of the rules contract, end to end through the engine.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "support.hpp"

namespace mdadmit::test {
namespace {

std::string read_example(const std::string& name) {
    std::ifstream in(std::string(MDADMIT_SOURCE_DIR) + "/examples/" + name);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

TEST(WorkedExample, DeniedEpdOnAscendYieldsExactlyItsFourFindings) {
    const auto evaluation = judge(read_example("denied-epd-on-ascend.yaml"));
    EXPECT_FALSE(evaluation.allowed());
    std::vector<std::pair<std::string, std::string>> actual;
    for (const auto& f : evaluation.findings) {
        EXPECT_EQ(f.severity, rules::Severity::deny) << f.rule;
        actual.emplace_back(f.path, f.message + " (" + std::string(f.rule) + ")");
    }
    const std::vector<std::pair<std::string, std::string>> expected{
        {"spec.router.extraArgs[1]",
         "unknown policy `round-robin` for vllm-router; did you mean `round_robin`? "
         "(router-policy-value)"},
        {"spec.router.extraArgs[2]",
         "`--epd-config` is set by the operator for vllm-router (router-flag-owned)"},
        {"spec.roles[0]",
         "Encode on vllm-router + vLLM is admitted on nvidia and amd, not ascend; use llm-d-router "
         "(encode-matrix)"},
        {"spec.router",
         "routed roles serve on different ports: encode 8000, prefill 8000, decode 8100 "
         "(port-uniformity)"},
    };
    EXPECT_EQ(actual, expected);
}

TEST(WorkedExample, ExternalDpBehindLlmDRouterIsAdmittedWithOneWarning) {
    const auto evaluation = judge(read_example("warned-external-dp.yaml"));
    EXPECT_TRUE(evaluation.allowed());
    EXPECT_EQ(rule_paths(evaluation),
              std::vector<std::string>{"external-dp-router@spec.router.name"});
}

TEST(WorkedExample, RoundRobinServingIsAdmittedWithoutFindings) {
    const auto evaluation = judge(read_example("admitted-round-robin.yaml"));
    EXPECT_TRUE(evaluation.allowed());
    EXPECT_TRUE(evaluation.findings.empty());
}

}  // namespace
}  // namespace mdadmit::test
