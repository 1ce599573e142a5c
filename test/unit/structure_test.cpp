// The structural check (rule `schema`) and the engine's behaviour on malformed input.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "mdadmit/rules/decode.hpp"
#include "mdadmit/rules/json_input.hpp"
#include "mdadmit/rules/limits.hpp"
#include "support.hpp"

namespace mdadmit::test {
namespace {

namespace json = boost::json;
using rules::StructureCheck;

rules::Evaluation judge_json(const json::value& value,
                             StructureCheck check = StructureCheck::full) {
    rules::EngineOptions options;
    options.structure_check = check;
    return rules::Engine::with_embedded_data(options).evaluate({value});
}

TEST(Schema, ReportsWrongTypesEnumsRangesAndMissingFieldsWithPaths) {
    const auto evaluation =
        judge(deployment("tgi", "{name: vllm-router, replicas: 0}",
                         "[{name: Bad_Name, kind: Worker, replicas: two, ports: [{port: 70000, "
                         "protocol: TCP}], extraArgs: [1]}, "
                         "{kind: Server}]"));
    EXPECT_FALSE(evaluation.allowed());
    std::map<std::string, std::string> by_path;
    for (const auto& f : of_rule(evaluation, "schema")) {
        EXPECT_EQ(f.severity, rules::Severity::deny);
        by_path[f.path] = f.message;
    }
    EXPECT_EQ(by_path["spec.engine.name"],
              "unsupported value \"tgi\"; expected one of: vLLM, SGLang, vllm, sglang");
    EXPECT_EQ(by_path["spec.router.replicas"], "0 is out of range: minimum 1");
    EXPECT_EQ(by_path["spec.roles[0].name"],
              "\"Bad_Name\" must match ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$");
    EXPECT_EQ(by_path["spec.roles[0].kind"],
              "unsupported value \"Worker\"; expected one of: Server, Prefill, Decode, Encode, "
              "server, prefill, decode");
    EXPECT_EQ(by_path["spec.roles[0].replicas"], "expected integer, got a string");
    EXPECT_EQ(by_path["spec.roles[0].ports[0].port"], "70000 is out of range: from 1 to 65535");
    EXPECT_EQ(by_path["spec.roles[0].extraArgs[0]"], "expected string, got an integer");
    EXPECT_EQ(by_path["spec.roles[1].name"], "required field is missing");
    EXPECT_EQ(by_path.size(), 8u);
}

TEST(Schema, UnknownFieldsAreNotErrors) {
    const auto evaluation =
        judge(deployment("vLLM", "", "[{name: s, shmSize: 1Gi, topology: {zone: a}}]",
                         "  kvTransfer: {backend: nixl}\n"));
    EXPECT_TRUE(evaluation.findings.empty());
}

TEST(Schema, TooManyRolesIsAFinding) {
    std::string roles = "[";
    for (int i = 0; i < 11; ++i) {
        roles += (i ? ", " : "") + std::string("{name: r") + std::to_string(i) + "}";
    }
    const auto found = of_rule(judge(deployment("vLLM", "", roles + "]")), "schema");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].path, "spec.roles");
    EXPECT_EQ(found[0].message, "has 11 entries; allowed: 1 to 10");
}

TEST(Schema, SemanticRulesStillJudgeTheWellFormedParts) {
    // The wrong-typed replicas is a schema finding; the owned router flag is still found.
    const auto evaluation = judge(deployment("vLLM", "{name: vllm-router, extraArgs: [--host, h]}",
                                             "[{name: s, replicas: many}]"));
    EXPECT_EQ(rule_paths(evaluation),
              (std::vector<std::string>{"schema@spec.roles[0].replicas",
                                        "router-flag-owned@spec.router.extraArgs[0]"}));
}

TEST(BadInput, NonObjectsAndMissingSpecAreFindingsNotCrashes) {
    for (const char* text :
         {"[]", "42", "\"text\"", "null", "{}", "{\"spec\": 3}", "{\"spec\": {\"roles\": {}}}"}) {
        for (auto check : {StructureCheck::full, StructureCheck::decoder_only}) {
            const auto evaluation = judge_json(json::parse(text), check);
            EXPECT_FALSE(evaluation.allowed()) << text;
            EXPECT_FALSE(of_rule(evaluation, "schema").empty()) << text;
        }
    }
}

TEST(BadInput, DecoderOnlyCheckReportsTypeProblemsOfTheFieldsRulesRead) {
    const auto value =
        json::parse(R"({"spec": {"model": {"name": "m"}, "engine": {"name": "vLLM", "version": "1"},
        "router": {"name": "vllm-router", "extraArgs": "--policy"},
        "roles": [{"name": "s", "ports": [{"port": "80"}], "kind": "Worker"}]}})");
    const auto evaluation = judge_json(value, StructureCheck::decoder_only);
    EXPECT_EQ(rule_paths(evaluation),
              (std::vector<std::string>{"schema@spec.router.extraArgs", "schema@spec.roles[0].kind",
                                        "schema@spec.roles[0].ports[0].port"}));
}

TEST(BadInput, DecoderProblemsAreASubsetOfTheSchemaCheck) {
    // The fast path must never admit what the full check refuses on a field the rules read.
    const auto value =
        json::parse(R"({"spec": {"model": {"name": 1}, "engine": {"name": "tgi", "version": 2},
        "router": {"name": "vllm-router", "image": 1, "extraArgs": [1, "--x"], "disaggregationThresholdTokens": "a"},
        "kvCache": {"poolRef": {"name": 3}},
        "roles": [{"name": "s", "size": "2", "resources": {"accelerator": "two"}, "env": [{"name": 1}],
                   "elasticEp": {"width": "w"}, "command": "run"}]}})");
    const auto full = judge_json(value, StructureCheck::full);
    const auto fast = judge_json(value, StructureCheck::decoder_only);
    std::set<std::string> full_paths;
    for (const auto& f : of_rule(full, "schema")) {
        full_paths.insert(f.path);
    }
    const auto fast_findings = of_rule(fast, "schema");
    EXPECT_EQ(fast_findings.size(), 12u);
    for (const auto& f : fast_findings) {
        EXPECT_TRUE(full_paths.count(f.path)) << f.path << ": " << f.message;
    }
}

// Quantities as the operator declares them: an integer or a string in Kubernetes' grammar.
// A defaulted object (`accelerator: "1"`) is judged as its integer twin is, in both checks.
TEST(Quantities, StringsAndIntegersAreJudgedAlike) {
    for (auto check : {StructureCheck::full, StructureCheck::decoder_only}) {
        const auto judged = [&](std::string_view resources) {
            return rule_paths(
                judge(deployment("vLLM", "",
                                 "[{name: s, resources: " + std::string(resources) +
                                     ", extraArgs: [-tp, '2']}]"),
                      rules::EngineOptions{.structure_check = check, .enforcement = {}}));
        };
        EXPECT_EQ(judged("{accelerator: '1'}"), judged("{accelerator: 1}"));
        EXPECT_EQ(judged("{accelerator: '1'}"),
                  (std::vector<std::string>{"parallelism@spec.roles[0].resources.accelerator"}));
        EXPECT_EQ(judged("{accelerator: '2'}"), judged("{accelerator: 2}"));
        EXPECT_TRUE(judged("{accelerator: '2'}").empty());
        // A fraction is well-formed; the width rule cannot count it and stays silent.
        EXPECT_TRUE(judged("{accelerator: '1500m'}").empty());
        EXPECT_TRUE(judged("{accelerator: '2k'}").empty());
        EXPECT_EQ(judged("{interface: '1'}"), judged("{interface: 1}"));
        EXPECT_EQ(
            judged("{interface: '1'}"),
            (std::vector<std::string>{"interface-transport@spec.roles[0].resources.interface"}));
    }
}

TEST(Quantities, MalformedQuantitiesAreSchemaFindingsNamingTheField) {
    const auto value = json::parse(R"({"spec": {"model": {"name": "m"},
        "engine": {"name": "vLLM", "version": "1"},
        "roles": [{"name": "a", "resources": {"accelerator": "two", "interface": 1.5}},
                  {"name": "b", "resources": {"accelerator": "1.5.0", "interface": "1e1.5"}}]}})");
    for (auto check : {StructureCheck::full, StructureCheck::decoder_only}) {
        std::map<std::string, std::string> by_path;
        for (const auto& f : of_rule(judge_json(value, check), "schema")) {
            by_path[f.path] = f.message;
        }
        EXPECT_EQ(by_path["spec.roles[0].resources.accelerator"],
                  "\"two\" is not a Kubernetes quantity (e.g. 1, \"2\", \"1500m\", \"1.5\")");
        EXPECT_EQ(by_path["spec.roles[0].resources.interface"],
                  "expected an integer or a quantity string, got a number");
        EXPECT_EQ(by_path["spec.roles[1].resources.accelerator"],
                  "\"1.5.0\" is not a Kubernetes quantity (e.g. 1, \"2\", \"1500m\", \"1.5\")");
        // The CRD's pattern admits "1e1.5"; Kubernetes cannot parse it, and neither check
        // lets it through.
        EXPECT_EQ(by_path["spec.roles[1].resources.interface"],
                  "\"1e1.5\" is not a Kubernetes quantity (e.g. 1, \"2\", \"1500m\", \"1.5\")");
        EXPECT_EQ(by_path.size(), 4u);
    }
}

TEST(Quantities, LowerCaseKindsOfOlderCrdsAreTheirCapitalisedKinds) {
    const auto older = judge(
        deployment("vllm", "{name: llm-d-router}",
                   "[{name: p, kind: prefill, ports: [{port: 8998}]}, {name: d, kind: decode}]"));
    EXPECT_EQ(rule_paths(older),
              (std::vector<std::string>{"port-uniformity@spec.router",
                                        "reserved-port@spec.roles[0].ports[0]"}));
}

TEST(BadInput, HugeArraysCostBoundedWork) {
    json::array args;
    for (int i = 0; i < 200000; ++i) {
        args.emplace_back("--port");
    }
    json::array roles;
    for (int i = 0; i < 1000; ++i) {
        roles.emplace_back(json::object{{"name", "r"}});
    }
    roles[0] = json::object{{"name", "r"}, {"extraArgs", args}};
    const json::value value = {
        {"spec", {{"model", {{"name", "m"}}}, {"engine", {{"name", "vLLM"}}}, {"roles", roles}}}};
    const auto decoded = rules::decode_model_deployment(value);
    EXPECT_EQ(decoded.model.roles.size(), rules::limits::max_roles_read);
    EXPECT_EQ(decoded.model.roles[0].extra_args.size(), rules::limits::max_list_entries_read);
    EXPECT_FALSE(judge_json(value).allowed());
}

// The API server reads a key written twice as its last value (Go's encoding/json does), and so
// does the decoder, whichever member of the object it reads, in small objects and in objects
// of more than 18 members (which Boost.JSON keeps in a hash table).
TEST(BadInput, AKeyWrittenTwiceIsReadAsItsLastValue) {
    std::string many_members;
    for (int i = 0; i < 20; ++i) {
        many_members += "\"x-" + std::to_string(i) + "\": 1, ";
    }
    const auto parsed = rules::parse_json(R"({
        "metadata": {"name": "first", "name": "md"},
        "spec": {"model": {"name": "m"}, "engine": {"name": "SGLang", "name": "vLLM"},
                 "router": {"name": "vllm-router", "replicas": 1, "replicas": 2},
                 "roles": [{"name": "a", "kind": "Decode", "size": 4, "name": "s",
                            "kind": "Server", "replicas": 1, "replicas": 3,
                            "resources": {"accelerator": "1", "accelerator": 8}},
                           {"name": "d", "kind": "Decode", "replicas": 2, )" +
                                          many_members + R"("replicas": 5}]}})");
    ASSERT_TRUE(parsed.ok()) << parsed.error().message;
    const auto decoded = rules::decode_model_deployment(parsed.value());
    EXPECT_TRUE(decoded.problems.empty());
    EXPECT_EQ(decoded.model.name, "md");
    EXPECT_EQ(decoded.model.engine, rules::EngineKind::vllm);
    ASSERT_TRUE(decoded.model.router.has_value());
    EXPECT_EQ(decoded.model.router->replicas, 2);
    ASSERT_EQ(decoded.model.roles.size(), 2u);
    EXPECT_EQ(decoded.model.roles[1].replicas, 5);
    const auto& role = decoded.model.roles[0];
    EXPECT_EQ(role.name, "s");
    EXPECT_EQ(role.kind, rules::RoleKind::server);
    EXPECT_EQ(role.replicas, 3);
    EXPECT_EQ(role.size, 4);
    ASSERT_TRUE(role.resources.accelerator.has_value());
    EXPECT_EQ(role.resources.accelerator->whole_count(), 8);
}

TEST(BadInput, DeepNestingIsAParseErrorWithAPosition) {
    const std::string deep = std::string(200, '[') + std::string(200, ']');
    const auto parsed = rules::parse_json(deep);
    ASSERT_FALSE(parsed.ok());
    EXPECT_NE(parsed.error().message.find("invalid JSON at byte"), std::string::npos)
        << parsed.error().message;
}

TEST(BadInput, TruncatedAndTrailingJsonAreErrors) {
    EXPECT_FALSE(rules::parse_json("{\"spec\": ").ok());
    EXPECT_FALSE(rules::parse_json("{} {}").ok());
    EXPECT_TRUE(rules::parse_json(" {} \n").ok());
}

TEST(Operations, DeleteAndConnectAreAlwaysAllowed) {
    const json::value garbage = 42;
    const auto engine = rules::Engine::with_embedded_data();
    EXPECT_TRUE(
        engine.evaluate({garbage, nullptr, nullptr, rules::Operation::remove}).findings.empty());
    EXPECT_TRUE(
        engine.evaluate({garbage, nullptr, nullptr, rules::Operation::connect}).findings.empty());
}

}  // namespace
}  // namespace mdadmit::test
