// Derived facts: argument streams, serving ports, serving modes and platforms.
#include <gtest/gtest.h>

#include <limits>
#include <optional>

#include <boost/json.hpp>

#include "mdadmit/inputs/documents.hpp"
#include "mdadmit/rules/decode.hpp"
#include "mdadmit/rules/facts.hpp"
#include "support.hpp"

namespace mdadmit::test {
namespace {

using rules::ServingMode;

TEST(ArgStream, BothSpellingsAndLastOccurrenceWins) {
    const std::vector<std::string> tokens{"--port", "8001", "--enable-x", "--port=8002",
                                          "model",  "-tp",  "2"};
    const rules::ArgStream args(tokens);
    const auto* port = args.last({"--port"});
    ASSERT_NE(port, nullptr);
    EXPECT_EQ(*port->value, "8002");
    EXPECT_EQ(port->flag_index, 3u);
    EXPECT_EQ(port->value_index, 3u);
    EXPECT_EQ(args.integer({"-tp", "--tensor-parallel-size"}), 2);
    EXPECT_FALSE(args.last({"--enable-x"})->value.has_value());
    EXPECT_EQ(args.flags().size(), 4u);
    EXPECT_EQ(rules::parse_integer("12a"), std::nullopt);
    EXPECT_EQ(rules::parse_integer(""), std::nullopt);
    EXPECT_EQ(rules::parse_integer("0_1"), std::nullopt);
    EXPECT_EQ(rules::parse_integer("-7"), -7);
}

TEST(ArgStream, UnderscoresAreReadAsDashesOnlyInLongFlagsOfEnginesThatDoSo) {
    const std::vector<std::string> tokens{
        "--tensor_parallel_size", "2", "--data_parallel", "4", "-t_p", "3", "--plain-flag"};
    const rules::ArgStream vllm(tokens, true);
    EXPECT_EQ(vllm.integer({"--tensor-parallel-size"}), 2);
    EXPECT_EQ(vllm.integer({"--tensor_parallel_size"}), std::nullopt);  // read with dashes
    const auto& flags = vllm.flags();
    ASSERT_EQ(flags.size(), 4u);
    EXPECT_TRUE(flags[1].abbreviates("--data-parallel-size"));
    EXPECT_FALSE(flags[1].abbreviates("--data"));  // longer than what it would abbreviate
    EXPECT_TRUE(flags[2].reads_as("-t_p"));        // a short flag keeps its spelling
    EXPECT_FALSE(flags[2].reads_as("-t-p"));
    EXPECT_TRUE(flags[3].abbreviates("--plain-flag-extra"));
    EXPECT_FALSE(flags[3].abbreviates("--plain"));

    const rules::ArgStream sglang(tokens, false);
    EXPECT_EQ(sglang.integer({"--tensor-parallel-size"}), std::nullopt);
    EXPECT_EQ(sglang.integer({"--tensor_parallel_size"}), 2);

    EXPECT_TRUE(rules::same_flag_name("--a_b", "--a-b", true));
    EXPECT_FALSE(rules::same_flag_name("--a_b", "--a-b", false));
    EXPECT_FALSE(rules::same_flag_name("--a_b", "--a_b-c", true, true));
    EXPECT_TRUE(rules::same_flag_name("--a_b", "--a-b-c", true, true));
    EXPECT_FALSE(rules::same_flag_name("--a-b-c", "--a-b", true, true));
    EXPECT_TRUE(rules::same_flag_name("--_b", "---b", true));  // `_` in the first letter's place
    EXPECT_FALSE(rules::same_flag_name("--b_c", "--a-c", true));
}

TEST(ArgStream, TheFirstLetterTellsMostFlagsApart) {
    EXPECT_TRUE(rules::differ_at_first_letter("--tensor-parallel-size", "--data-parallel-size"));
    EXPECT_TRUE(rules::differ_at_first_letter("-tp", "-tq"));
    EXPECT_FALSE(rules::differ_at_first_letter("-tp", "-dp"));  // the whole comparison tells
    EXPECT_FALSE(rules::differ_at_first_letter("--t", "--tensor-parallel-size"));
    EXPECT_FALSE(rules::differ_at_first_letter("--_ensor", "--tensor"));  // `_` may read as `-`
    EXPECT_FALSE(rules::differ_at_first_letter("--.x", "--tensor"));      // `.` may end the name
    EXPECT_FALSE(rules::differ_at_first_letter("-d", "-t"));              // too short to tell
}

TEST(ArgStream, EngineIntegersAreReadAsPythonsIntReadsThem) {
    EXPECT_EQ(rules::parse_engine_integer("+4"), 4);
    EXPECT_EQ(rules::parse_engine_integer(" 2\n"), 2);
    EXPECT_EQ(rules::parse_engine_integer("1_000"), 1000);
    EXPECT_EQ(rules::parse_engine_integer("-9223372036854775808"),
              std::numeric_limits<std::int64_t>::min());
    for (const char* bad : {"", "_1", "1_", "1__0", "1.0", "9223372036854775808", "+", "0x10"}) {
        EXPECT_EQ(rules::parse_engine_integer(bad), std::nullopt) << bad;
    }
    // A bare `--` ends the flags: what follows is positional.
    const std::vector<std::string> tokens{"--port", "8000", "--", "--port", "9000"};
    const rules::ArgStream args(tokens);
    EXPECT_EQ(args.integer({"--port"}), 8000);
    EXPECT_EQ(args.flags().size(), 1u);
}

// The model refers into its documents, and the facts into the model: all are kept together.
struct Derived {
    std::vector<inputs::Document> documents;
    rules::InstanceTypes instance_types;
    std::optional<rules::Decoded> decoded;
    std::optional<rules::DeploymentFacts> facts;
};

std::unique_ptr<Derived> derive(const std::string& yaml) {
    auto out = std::make_unique<Derived>();
    out->documents = inputs::parse_documents(yaml, "t").value();
    inputs::collect_instance_types(out->documents, out->instance_types);
    out->decoded.emplace(rules::decode_model_deployment(out->documents.back().value));
    static const auto data = rules::embedded_rule_data();
    out->facts.emplace(rules::derive_facts(out->decoded->model, data, &out->instance_types));
    return out;
}

TEST(Facts, ServingModesFollowTheSeedsTable) {
    const auto vllm = derive(
        deployment("vLLM", "{name: llm-d-router}",
                   "[{name: a}, {name: b, extraArgs: [-dpe]}, {name: c, elasticEp: {width: 4}}, "
                   "{name: d, extraArgs: [--data-parallel-start-rank, '0', -dpl, '2']}]"));
    std::vector<ServingMode> modes;
    for (const auto& role : vllm->facts->roles) {
        modes.push_back(role.mode);
    }
    EXPECT_EQ(modes,
              (std::vector<ServingMode>{ServingMode::internal_server, ServingMode::external_dp,
                                        ServingMode::elastic_ep, ServingMode::internal_server}));
    const auto pd = derive(
        deployment("SGLang", "",
                   "[{name: e, kind: Encode}, {name: p, kind: Prefill}, {name: d, kind: Decode}, "
                   "{name: s, extraArgs: [--enable-dp-attention, --data-parallel-size, '2']}]"));
    EXPECT_EQ(pd->facts->roles[0].mode, ServingMode::encode);
    EXPECT_EQ(pd->facts->roles[1].mode, ServingMode::prefill);
    EXPECT_EQ(pd->facts->roles[2].mode, ServingMode::decode);
    EXPECT_EQ(pd->facts->roles[3].mode, ServingMode::external_dp);
    EXPECT_TRUE(pd->facts->has_prefill_decode_pair);
}

TEST(Facts, ServingPortPrefersDeclaredThenFlagThenDefault) {
    const auto d =
        derive(deployment("vLLM", "{name: llm-d-router}",
                          "[{name: a, ports: [{port: 9000}], extraArgs: [--port, '9100']}, "
                          "{name: b, extraArgs: [--port, '9200']}, {name: c}, "
                          "{name: p, kind: Decode, extraArgs: [--port, '8200']}, "
                          "{name: q, kind: Decode, command: [vllm, serve, --port, '8300']}]"));
    std::vector<std::int64_t> ports;
    for (const auto& role : d->facts->roles) {
        ports.push_back(role.serving_port);
    }
    EXPECT_EQ(ports, (std::vector<std::int64_t>{9000, 9200, 8000, 8000, 8300}));
    EXPECT_TRUE(d->facts->roles[3].proxy_fronted_decoder);
    EXPECT_FALSE(d->facts->roles[4].proxy_fronted_decoder);
    EXPECT_EQ(d->facts->roles[4].arg_path(3), "spec.roles[4].command[3]");
}

TEST(Facts, PlatformFromTheInstanceTypesManufacturer) {
    const auto d = derive(instance_type("a", "NVIDIA Corporation") + instance_type("b", "") +
                          deployment("vLLM", "",
                                     "[{name: x, instanceType: a}, {name: y, instanceType: b}, "
                                     "{name: z, instanceType: missing}, {name: w}]"));
    EXPECT_EQ(d->facts->roles[0].platform, rules::Platform::nvidia);
    EXPECT_EQ(d->facts->roles[1].platform, rules::Platform::unknown);
    EXPECT_EQ(d->facts->roles[2].platform, rules::Platform::unknown);
    EXPECT_EQ(d->facts->roles[3].platform, rules::Platform::unknown);
    EXPECT_EQ(rules::platform_from_manufacturer("Advanced Micro Devices, Inc."),
              rules::Platform::amd);
    EXPECT_EQ(rules::platform_from_manufacturer("Huawei"), rules::Platform::ascend);
    EXPECT_EQ(rules::platform_from_manufacturer("Intel"), rules::Platform::other);
    // Read in any case, anywhere in the name; blank is not yet known.
    EXPECT_EQ(rules::platform_from_manufacturer("nvidia"), rules::Platform::nvidia);
    EXPECT_EQ(rules::platform_from_manufacturer("Nvidia Corp"), rules::Platform::nvidia);
    EXPECT_EQ(rules::platform_from_manufacturer("AMD"), rules::Platform::amd);
    EXPECT_EQ(rules::platform_from_manufacturer("Huawei ASCEND"), rules::Platform::ascend);
    EXPECT_EQ(rules::platform_from_manufacturer("NVIDI"), rules::Platform::other);
    EXPECT_EQ(rules::platform_from_manufacturer(" \t"), rules::Platform::unknown);
}

}  // namespace
}  // namespace mdadmit::test
