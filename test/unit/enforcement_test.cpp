// Staged enforcement: a rule's findings denied, reported as warnings ("would deny"), or not
// reported at all, per rule and for every rule, over the data file's catalogue.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json.hpp>

#include "mdadmit/inputs/documents.hpp"
#include "mdadmit/inputs/test_case.hpp"
#include "mdadmit/rules/engine.hpp"
#include "support.hpp"

namespace mdadmit::test {
namespace {

using rules::Action;
using rules::Severity;

// A misspelt policy (deny) and a ModelDeployment that also draws a warning
// (encode-platform-unknown: the Encode role's InstanceType is unknown).
const std::string misspelt_policy = deployment(
    "vLLM", "{name: vllm-router, extraArgs: [--policy, round-robin]}", "[{name: s, replicas: 1}]");

rules::EngineOptions enforcing(std::string_view text) {
    auto parsed = rules::parse_enforcement(text);
    EXPECT_TRUE(parsed.ok()) << text;
    return {rules::StructureCheck::full, parsed.ok() ? parsed.value() : rules::Enforcement{}};
}

TEST(Enforcement, ByDefaultARuleActsAsItsSeverity) {
    const auto evaluation = judge(misspelt_policy);
    EXPECT_FALSE(evaluation.allowed());
    const auto found = of_rule(evaluation, "router-policy-value");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].severity, Severity::deny);
    EXPECT_TRUE(found[0].enforced);
}

TEST(Enforcement, WarnAdmitsWithTheFindingMarkedNotEnforced) {
    for (const auto* text : {"router-policy-value=warn", "*=warn"}) {
        const auto evaluation = judge(misspelt_policy, enforcing(text));
        EXPECT_TRUE(evaluation.allowed()) << text;
        const auto found = of_rule(evaluation, "router-policy-value");
        ASSERT_EQ(found.size(), 1u) << text;
        EXPECT_EQ(found[0].severity, Severity::warn);
        EXPECT_FALSE(found[0].enforced);
        EXPECT_EQ(found[0].path, "spec.router.extraArgs[1]");
        EXPECT_EQ(found[0].message, judge(misspelt_policy).findings.at(0).message);
    }
}

TEST(Enforcement, OffReportsNothingOfThatRuleOnly) {
    const std::string two_problems =
        deployment("vLLM", "{name: vllm-router, extraArgs: [--policy, round-robin, --host, x]}",
                   "[{name: s, replicas: 1}]");
    EXPECT_EQ(rule_paths(judge(two_problems)),
              (std::vector<std::string>{"router-policy-value@spec.router.extraArgs[1]",
                                        "router-flag-owned@spec.router.extraArgs[2]"}));
    const auto evaluation = judge(two_problems, enforcing("router-policy-value=off"));
    EXPECT_EQ(rule_paths(evaluation),
              (std::vector<std::string>{"router-flag-owned@spec.router.extraArgs[2]"}));
    EXPECT_FALSE(evaluation.allowed());
}

TEST(Enforcement, ARulesOwnEntryWinsOverTheWildcardWhateverTheOrder) {
    for (const auto* text :
         {"*=warn,router-policy-value=deny", "router-policy-value=deny,*=warn"}) {
        const auto evaluation = judge(misspelt_policy, enforcing(text));
        EXPECT_FALSE(evaluation.allowed()) << text;
        EXPECT_TRUE(of_rule(evaluation, "router-policy-value").at(0).enforced);
    }
    // Among a rule's own entries the last wins.
    EXPECT_TRUE(
        judge(misspelt_policy, enforcing("router-policy-value=deny,router-policy-value=warn"))
            .allowed());
}

TEST(Enforcement, AWarnRuleMadeToDenyRefuses) {
    const std::string unknown_platform =
        "apiVersion: worker.gpustack.ai/v1\nkind: ModelDeployment\n"
        "metadata: {name: md, namespace: ns}\n"
        "spec:\n  model: {name: m}\n  engine: {name: vLLM, version: 0.11.0}\n"
        "  router: {name: vllm-router}\n"
        "  roles:\n  - {name: e, kind: Encode, instanceType: gpu}\n"
        "  - {name: p, kind: Prefill}\n  - {name: d, kind: Decode}\n";
    const auto warned = judge(unknown_platform);
    ASSERT_EQ(of_rule(warned, "encode-platform-unknown").size(), 1u);
    EXPECT_EQ(of_rule(warned, "encode-platform-unknown")[0].severity, Severity::warn);
    const auto denied = judge(unknown_platform, enforcing("encode-platform-unknown=deny"));
    EXPECT_FALSE(denied.allowed());
    EXPECT_TRUE(of_rule(denied, "encode-platform-unknown").at(0).enforced);
}

TEST(Enforcement, TheEngineReportsEachRulesEffectiveAction) {
    const auto engine = rules::Engine::with_embedded_data(enforcing("*=warn,port-uniformity=off"));
    EXPECT_EQ(engine.action("router-policy-value"), Action::warn);
    EXPECT_EQ(engine.action("port-uniformity"), Action::off);
    EXPECT_EQ(rules::Engine::with_embedded_data().action("router-policy-value"), Action::deny);
    EXPECT_EQ(rules::Engine::with_embedded_data().action("encode-platform-unknown"), Action::warn);
}

TEST(Enforcement, AnUnknownRuleIsRefusedWithTheClosestId) {
    const auto engine =
        rules::Engine::create(rules::embedded_rule_data(), enforcing("router-polcy-value=warn"));
    ASSERT_FALSE(engine.ok());
    EXPECT_EQ(engine.error().message,
              "--enforce: no rule \"router-polcy-value\" (did you mean router-policy-value?); "
              "`mdadmit rules` lists them");
}

TEST(Enforcement, MalformedEntriesAreRefusedNamingTheEntry) {
    for (const auto* text : {"parallelism", "parallelism=block", "=warn", "a=warn,", ""}) {
        const auto parsed = rules::parse_enforcement(text);
        ASSERT_FALSE(parsed.ok()) << text;
        EXPECT_NE(parsed.error().message.find("expected RULE=deny|warn|off"), std::string::npos);
    }
    const auto parsed = rules::parse_enforcement("*=warn,parallelism=deny");
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(rules::to_string(parsed.value()), "*=warn,parallelism=deny");
}

// A replaced rules.json can ship a new rule in warn mode: `"action": "warn"` on its entry.
TEST(Enforcement, TheDataFileCanStageARule) {
    boost::json::value file = boost::json::parse(rules::embedded_rule_data_json());
    for (auto& rule : file.as_object()["rules"].as_array()) {
        if (rule.at("id") == "router-policy-value") {
            rule.as_object()["action"] = "warn";
        }
    }
    auto data = rules::parse_rule_data(boost::json::serialize(file), "staged.json");
    ASSERT_TRUE(data.ok()) << data.error().message;
    const auto engine = rules::Engine::create(std::move(data).value());
    ASSERT_TRUE(engine.ok());
    EXPECT_EQ(engine.value().action("router-policy-value"), Action::warn);
    EXPECT_EQ(engine.value().action("router-flag-owned"), Action::deny);

    file.as_object()["rules"].as_array()[2].as_object()["action"] = "block";
    const auto refused = rules::parse_rule_data(boost::json::serialize(file), "staged.json");
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().message,
              "rule data staged.json: rules[2].action: expected deny, warn or off, got \"block\"");
}

// Every case of test/cases/ that is refused is admitted under `*=warn`, each of its deny
// findings kept as a warning at the same field that says it would have denied.
TEST(Enforcement, StarWarnAdmitsEveryDeniedCaseOfTheSuite) {
    auto documents = inputs::read_inputs({std::string(MDADMIT_SOURCE_DIR) + "/test/cases"});
    ASSERT_TRUE(documents.ok()) << documents.error().message;
    auto cases = inputs::parse_cases(documents.value());
    ASSERT_TRUE(cases.ok()) << cases.error().message;
    rules::InstanceTypes suite_types;
    inputs::collect_instance_types(documents.value(), suite_types);
    int denied_cases = 0;
    for (const auto& test_case : cases.value()) {
        if (test_case.pod || test_case.expect_allowed) {
            continue;
        }
        auto data = rules::with_settings(rules::embedded_rule_data(), test_case.settings);
        ASSERT_TRUE(data.ok()) << test_case.label();
        const auto strict = rules::Engine::create(data.value());
        const auto staged = rules::Engine::create(data.value(), enforcing("*=warn"));
        ASSERT_TRUE(strict.ok() && staged.ok()) << test_case.label();
        rules::InstanceTypes types = suite_types;
        types.insert(test_case.instance_types.begin(), test_case.instance_types.end());
        const rules::Review review{test_case.object,
                                   test_case.old_object ? &*test_case.old_object : nullptr, &types,
                                   test_case.operation};
        const auto refused = strict.value().evaluate(review);
        const auto admitted = staged.value().evaluate(review);
        ASSERT_FALSE(refused.allowed()) << test_case.label();
        ++denied_cases;
        EXPECT_TRUE(admitted.allowed()) << test_case.label();
        for (const auto* finding : refused.with_severity(Severity::deny)) {
            const auto kept = std::find_if(
                admitted.findings.begin(), admitted.findings.end(), [&](const rules::Finding& f) {
                    return f.rule == finding->rule && f.path == finding->path &&
                           f.severity == Severity::warn && !f.enforced;
                });
            EXPECT_NE(kept, admitted.findings.end())
                << test_case.label() << ": " << inputs::finding_key(*finding);
        }
    }
    EXPECT_GT(denied_cases, 50);
}

}  // namespace
}  // namespace mdadmit::test
