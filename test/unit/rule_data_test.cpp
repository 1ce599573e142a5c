// The rule data file: the built-in copy, files given at start-up, and malformed files.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <fstream>

#include "mdadmit/rules/engine.hpp"

namespace mdadmit::test {
namespace {

namespace json = boost::json;

json::value embedded() {
    return json::parse(rules::embedded_rule_data_json());
}

std::string refusal(const json::value& data) {
    auto parsed = rules::parse_rule_data(json::serialize(data), "test.json");
    return parsed ? std::string("accepted") : parsed.error().message;
}

TEST(RuleData, BuiltInDataParsesAndMatchesTheImplementedRules) {
    auto data = rules::parse_rule_data(rules::embedded_rule_data_json(), "(built in)");
    ASSERT_TRUE(data.ok()) << data.error().message;
    EXPECT_TRUE(rules::Engine::create(data.value()).ok());
    EXPECT_EQ(data.value().rules.size(), 38u);
    EXPECT_EQ(data.value().router("vllm-router")->owned_flags.size(), 13u);
}

TEST(RuleData, MalformedFilesAreRefusedNamingTheField) {
    EXPECT_EQ(refusal(json::value("x")), "rule data test.json: (root): expected an object");
    auto data = embedded();
    data.as_object()["routers"].as_array()[1].as_object()["ownedFlags"].as_array()[3] = 7;
    EXPECT_EQ(refusal(data),
              "rule data test.json: routers[1].ownedFlags[3]: expected a non-empty string");
    data = embedded();
    data.as_object()["rules"].as_array()[2].as_object()["severity"] = "block";
    EXPECT_EQ(refusal(data),
              "rule data test.json: rules[2].severity: expected deny or warn, got \"block\"");
    data = embedded();
    data.as_object()["encodeMatrix"].as_array()[0].as_object()["router"] = "nginx";
    EXPECT_EQ(refusal(data),
              "rule data test.json: encodeMatrix[0].router: unknown router \"nginx\"");
    data = embedded();
    data.as_object().erase("reservedPorts");
    EXPECT_EQ(refusal(data), "rule data test.json: reservedPorts: required field is missing");
    data = embedded();
    data.as_object()["routers"].as_array()[2].as_object()["features"].as_array()[1] = "dp-awre";
    EXPECT_EQ(refusal(data),
              "rule data test.json: routers[2].features: expected "
              "pd-disaggregation or dp-aware, got \"dp-awre\"");
    data = embedded();
    data.as_object()["routers"].as_array()[0].as_object().erase("features");
    EXPECT_EQ(refusal(data), "rule data test.json: routers[0].features: required field is missing");
    data = embedded();
    data.as_object()["parallelism"]
        .as_object()["vLLM"]
        .as_object()["rankPerMember"]
        .as_object()
        .erase("localSizeFlags");
    EXPECT_EQ(refusal(data),
              "rule data test.json: parallelism.vLLM.rankPerMember.localSizeFlags: "
              "required field is missing");
    data = embedded();
    data.as_object()["version"] = 1;
    EXPECT_EQ(refusal(data),
              "rule data test.json: version: unsupported version 1; this build reads version 3");
    data = embedded();
    data.as_object()["ownedArgs"].as_array()[0].as_object()["shortestPrefix"] = "--kv-x";
    EXPECT_EQ(refusal(data),
              "rule data test.json: ownedArgs[0].shortestPrefix: \"--kv-x\" is not "
              "a prefix of --kv-transfer-config");
    data = embedded();
    data.as_object()["flagSpellings"].as_object()["vLLM"].as_array()[0] = "camelCase";
    EXPECT_EQ(refusal(data),
              "rule data test.json: flagSpellings.vLLM: expected underscores, dotted-members or "
              "unique-prefixes, got \"camelCase\"");
    data = embedded();
    data.as_object()["settings"].as_object()["privileged"] = true;
    EXPECT_EQ(refusal(data),
              "rule data test.json: settings.privileged: unknown setting (privilegedAllowed, "
              "hostPathVolumeAllowed, kvCacheDtypeOwned)");
    data = embedded();
    data.as_object()["ownedArgs"].as_array()[0].as_object()["setting"] = "noSuchSetting";
    EXPECT_EQ(refusal(data),
              "rule data test.json: ownedArgs[0].setting: unknown setting \"noSuchSetting\"");
    data = embedded();
    auto& degrees = data.as_object()["parallelism"].as_object()["vLLM"].as_object()["degrees"];
    degrees.as_array()[0].as_object()["use"] = "depth";
    EXPECT_EQ(refusal(data),
              "rule data test.json: parallelism.vLLM.degrees[0].use: expected width, data, "
              "data-local or narrows-data, got \"depth\"");
    degrees.as_array().erase(degrees.as_array().begin());
    EXPECT_EQ(refusal(data),
              "rule data test.json: parallelism.vLLM.degrees: a degree named \"tensor\" is "
              "required");
    EXPECT_NE(rules::parse_rule_data("{\"version\":", "t").error().message.find("invalid JSON"),
              std::string::npos);
}

TEST(FlagSpelling, EngineParsersAcceptMoreThanTheExactName) {
    const rules::FlagSpelling vllm{true, true, true};
    const std::string_view flag = "--kv-transfer-config";
    EXPECT_TRUE(rules::spells("--kv-transfer-config", flag, "--kv-t", vllm));
    EXPECT_TRUE(rules::spells("--kv_transfer_config", flag, "--kv-t", vllm));
    EXPECT_TRUE(rules::spells("--kv-transfer-config.kv_role", flag, "--kv-t", vllm));
    EXPECT_TRUE(rules::spells("--kv-t", flag, "--kv-t", vllm));
    EXPECT_FALSE(rules::spells("--kv-", flag, "--kv-t", vllm));                   // ambiguous
    EXPECT_FALSE(rules::spells("--kv-transfer-config-x", flag, "--kv-t", vllm));  // longer
    EXPECT_FALSE(rules::spells("--kv-t", flag, "", vllm));  // no abbreviation known
    EXPECT_FALSE(rules::spells("--xv-transfer-config", flag, "--kv-t", vllm));
    EXPECT_FALSE(rules::spells("--kv-transfer-confix", flag, "--kv-t", vllm));
    const rules::FlagSpelling exact{};
    EXPECT_FALSE(rules::spells("--kv_transfer_config", flag, "--kv-t", exact));
    EXPECT_FALSE(rules::spells("--kv-t", flag, "--kv-t", exact));
    EXPECT_TRUE(rules::spells("-dp", "-dp", "", vllm));
    EXPECT_FALSE(rules::spells("-d_p", "-dp", "", vllm));  // short aliases have one spelling
}

TEST(RuleData, TheCatalogueAndTheImplementationMustAgree) {
    auto data = rules::parse_rule_data(rules::embedded_rule_data_json(), "x").value();
    auto missing = data;
    missing.rules.erase(missing.rules.begin() + 3);
    EXPECT_EQ(
        rules::Engine::create(missing).error().message,
        "rule data: rule \"router-flag-owned\" is implemented but missing from the rules list");
    auto extra = data;
    extra.rules.push_back({"no-such-rule", rules::Severity::deny, "x", "y", std::nullopt});
    EXPECT_EQ(rules::Engine::create(extra).error().message,
              "rule data: rule \"no-such-rule\" is listed but not implemented");
}

TEST(RuleData, SettingsCanBeChangedByName) {
    const auto data = rules::embedded_rule_data();
    EXPECT_FALSE(data.settings.privileged_allowed);
    EXPECT_TRUE(data.settings.kv_cache_dtype_owned);
    const auto opened = rules::with_settings(data, json::object{{"privilegedAllowed", true}});
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    EXPECT_TRUE(opened.value().settings.privileged_allowed);
    EXPECT_FALSE(opened.value().settings.host_path_volume_allowed);
    EXPECT_EQ(
        rules::with_settings(data, json::object{{"privilegedAllowed", "yes"}}).error().message,
        "settings.privilegedAllowed: expected true or false");
}

TEST(RuleData, AReplacedFileChangesTheVerdictWithoutARebuild) {
    auto data = embedded();
    // A newer vllm-router learns a policy value.
    data.as_object()["routers"].as_array()[1].as_object()["policyValues"].as_array().emplace_back(
        "least_load");
    const std::string path = testing::TempDir() + "/rules-newer.json";
    std::ofstream(path) << json::serialize(data);
    auto loaded = rules::load_rule_data_file(path);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    const auto engine = rules::Engine::create(std::move(loaded).value()).value();
    const json::value md = json::parse(
        R"({"spec": {"model": {"name": "m"}, "engine": {"name": "vLLM", "version": "0.29.0"},
        "router": {"name": "vllm-router", "extraArgs": ["--policy=least_load"]}, "roles": [{"name": "s"}]}})");
    EXPECT_TRUE(engine.evaluate({md}).allowed());
    EXPECT_FALSE(rules::Engine::with_embedded_data().evaluate({md}).allowed());
    EXPECT_EQ(rules::load_rule_data_file("/nonexistent/rules.json").error().message,
              "rule data /nonexistent/rules.json: cannot open the file");
}

// The routers' features and the engines' data-parallel vocabularies are data: a replaced file
// changes what the rules see, with no rule code naming a router or a flag.
TEST(RuleData, RouterFeaturesAndDataParallelFlagsComeFromTheFile) {
    const json::value object = json::parse(R"({
        "apiVersion": "worker.gpustack.ai/v1", "kind": "ModelDeployment",
        "metadata": {"name": "chat", "namespace": "default"},
        "spec": {"model": {"name": "m"}, "engine": {"name": "SGLang", "version": "0.5.0"},
                 "router": {"name": "sglang-gateway"},
                 "roles": [{"name": "prefill", "kind": "Prefill"},
                           {"name": "decode", "kind": "Decode",
                            "extraArgs": ["--enable-dp-attention", "--dp-size", "2"]}]}})");
    const auto rules_of = [&](const json::value& data) {
        auto parsed = rules::parse_rule_data(json::serialize(data), "test.json");
        EXPECT_TRUE(parsed.ok()) << parsed.error().message;
        auto engine = rules::Engine::create(std::move(parsed).value());
        std::vector<std::string> ids;
        for (const auto& finding : engine.value().evaluate({object}).findings) {
            ids.emplace_back(finding.rule);
        }
        return ids;
    };
    EXPECT_EQ(rules_of(embedded()), std::vector<std::string>{"pd-dp-aware-exclusion"});

    json::value data = embedded();
    data.as_object()["routers"].as_array()[2].as_object()["features"] = json::array{"dp-aware"};
    EXPECT_TRUE(rules_of(data).empty()) << "a gateway that never renders --pd-disaggregation";

    data = embedded();
    data.as_object()["parallelism"]
        .as_object()["SGLang"]
        .as_object()["attentionDp"]
        .as_object()["enableFlags"] = json::array{"--enable-attention-dp"};
    EXPECT_TRUE(rules_of(data).empty()) << "--enable-dp-attention no longer switches it on";
}

}  // namespace
}  // namespace mdadmit::test
