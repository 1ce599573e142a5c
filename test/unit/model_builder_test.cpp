// The model builder: what decode_model_deployment reads from a DOM, read from parse events;
// and where it leaves the object to the decoder.
#include "mdadmit/rules/model_builder.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <memory_resource>
#include <string>

#include "mdadmit/inputs/documents.hpp"
#include "mdadmit/inputs/test_case.hpp"
#include "mdadmit/rules/decode.hpp"
#include "mdadmit/rules/limits.hpp"

namespace mdadmit::test {
namespace {

namespace json = boost::json;
using rules::ModelBuilder;

// Gives `value`'s events to `builder`, as a parser reading its JSON does.
void feed(const json::value& value, ModelBuilder& builder) {
    switch (value.kind()) {
        case json::kind::object:
            builder.begin_object();
            for (const auto& member : value.get_object()) {
                builder.key(member.key());
                feed(member.value(), builder);
            }
            builder.end_object();
            return;
        case json::kind::array:
            builder.begin_array();
            for (const auto& element : value.get_array()) {
                feed(element, builder);
            }
            builder.end_array();
            return;
        case json::kind::string:
            builder.string(value.get_string());
            return;
        case json::kind::int64:
            builder.integer(value.get_int64());
            return;
        case json::kind::uint64:
            builder.unsigned_integer(value.get_uint64());
            return;
        case json::kind::double_:
            builder.number(value.get_double());
            return;
        case json::kind::bool_:
            builder.boolean(value.get_bool());
            return;
        case json::kind::null:
            builder.null();
            return;
    }
}

class ModelBuilderTest : public testing::Test {
  protected:
    std::optional<rules::ModelDeployment> built(const json::value& object) {
        ModelBuilder builder(&memory);
        feed(object, builder);
        return builder.finish();
    }
    rules::Decoded decoded(const json::value& object) {
        return rules::decode_model_deployment(object, &memory);
    }

    std::pmr::monotonic_buffer_resource memory;
};

constexpr std::string_view typical = R"({
    "apiVersion": "worker.gpustack.ai/v1", "kind": "ModelDeployment",
    "metadata": {"name": "chat", "namespace": "team-a", "labels": {"a": "b"},
                 "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}]},
    "spec": {"model": {"name": "qwen", "artifactRef": {"name": "qwen-art"}},
             "engine": {"name": "vLLM", "version": "0.11.0"},
             "kvCache": {"poolRef": {"name": "pool"}}, "kvTransfer": {"protocol": "nixl"},
             "router": {"name": "vllm-router", "replicas": 2, "extraArgs": ["--policy", "round_robin"],
                        "requestTimeoutSeconds": 30, "disaggregationThresholdTokens": 512},
             "roles": [
                 {"name": "prefill", "kind": "Prefill", "replicas": 2, "size": 2,
                  "instanceType": "h100", "image": "vllm:1",
                  "resources": {"accelerator": "1", "acceleratorSlicedMemoryPercentage": 50,
                                "acceleratorSlicedCoresPercentage": 0,
                                "acceleratorPartitionedProfile": "1g", "interface": 2},
                  "ports": [{"port": 8000}, null, {"port": 9000, "protocol": "UDP"}],
                  "command": ["vllm", "serve"], "extraArgs": ["--tensor-parallel-size", "2", null],
                  "env": [{"name": "A", "value": "1"}, {"name": "B"}, null],
                  "additionalVolumes": [
                      {"name": "cache", "mountPath": "/cache", "readOnly": true,
                       "configMap": {"name": "c"}, "hostPath": {"path": "/var/cache"},
                       "mountPropagation": "None", "note": "x", "emptyDir": {}},
                      null, {"name": "bare"}],
                  "privileged": true, "topology": {"requiredLevel": "rack"},
                  "elasticEp": {"width": 4}},
                 null,
                 {"name": "decode", "kind": "decode", "replicas": 4, "elasticEp": {}}]},
    "status": {"phase": "Ready"}})";

TEST_F(ModelBuilderTest, BuildsWhatTheDecoderReadsFromADom) {
    const json::value object = json::parse(typical);
    const rules::Decoded expected = decoded(object);
    ASSERT_TRUE(expected.problems.empty()) << expected.problems.front().message;
    const auto model = built(object);
    ASSERT_TRUE(model.has_value());
    EXPECT_EQ(*model, expected.model);
    // Spot checks that the comparison compares what it should.
    ASSERT_EQ(model->roles.size(), 2u);
    EXPECT_EQ(model->roles[1].index, 2u);
    EXPECT_EQ(model->roles[0].ports.size(), 3u);
    EXPECT_EQ(model->roles[0].ports[2].protocol, "UDP");
    EXPECT_EQ(model->roles[0].extra_args.back(), "");
    const std::vector<std::string_view> sources(
        model->roles[0].additional_volumes[0].sources.begin(),
        model->roles[0].additional_volumes[0].sources.end());
    EXPECT_EQ(sources, (std::vector<std::string_view>{"configMap", "hostPath", "emptyDir"}));
    EXPECT_FALSE(model->roles[0].additional_volumes[1].is_object);
}

TEST_F(ModelBuilderTest, NullIsAbsentAsTheDecoderReadsIt) {
    const json::value object = json::parse(R"({
        "metadata": {"name": null, "namespace": null, "deletionTimestamp": null},
        "spec": {"model": {"name": null, "artifactRef": {"name": null}}, "engine": null,
                 "kvCache": {"poolRef": null}, "kvTransfer": null, "router": null,
                 "roles": [{"name": null, "kind": null, "replicas": null, "size": null,
                            "resources": null, "ports": null, "command": null,
                            "extraArgs": null, "env": null, "additionalVolumes": null,
                            "privileged": null, "topology": null, "elasticEp": null}]}})");
    const rules::Decoded expected = decoded(object);
    ASSERT_TRUE(expected.problems.empty());
    const auto model = built(object);
    ASSERT_TRUE(model.has_value());
    EXPECT_EQ(*model, expected.model);
    EXPECT_FALSE(model->roles[0].command.has_value());
    EXPECT_EQ(model->artifact_name, "");
}

TEST_F(ModelBuilderTest, ADeletionTimestampOfAnyValueMarksTheObjectBeingDeleted) {
    for (const std::string_view stamp : {R"("2026-01-01T00:00:00Z")", "{}", "[1]", "0"}) {
        const json::value object = json::parse(R"({"metadata": {"deletionTimestamp": )" +
                                               std::string(stamp) + R"(}, "spec": {}})");
        const auto model = built(object);
        ASSERT_TRUE(model.has_value()) << stamp;
        EXPECT_TRUE(model->being_deleted) << stamp;
        EXPECT_EQ(*model, decoded(object).model) << stamp;
    }
}

TEST_F(ModelBuilderTest, LeavesToTheDecoderWhatItWouldReport) {
    for (const std::string_view text : {
             R"([])",
             R"({"metadata": {"name": "a"}})",
             R"({"spec": []})",
             R"({"metadata": {"name": 7}, "spec": {}})",
             R"({"spec": {"engine": {"name": "TGI"}}})",
             R"({"spec": {"roles": [{"kind": "Router"}]}})",
             R"({"spec": {"roles": [{"replicas": "2"}]}})",
             R"({"spec": {"roles": [{"replicas": 1.5}]}})",
             R"({"spec": {"roles": [{"replicas": 18446744073709551615}]}})",
             R"({"spec": {"roles": [{"resources": {"accelerator": "two"}}]}})",
             R"({"spec": {"roles": [{"resources": {"accelerator": true}}]}})",
             R"({"spec": {"roles": [{"extraArgs": ["--a", 1]}]}})",
             R"({"spec": {"roles": [{"ports": [8000]}]}})",
             R"({"spec": {"roles": [3]}})",
             R"({"spec": {"roles": [{"privileged": "yes"}]}})",
             R"({"spec": {"router": {"extraArgs": "--policy"}}})",
             R"({"spec": {"roles": [{"additionalVolumes": [{"hostPath": {"path": 1}}]}]}})",
         }) {
        const json::value object = json::parse(text);
        EXPECT_FALSE(decoded(object).problems.empty()) << text;
        EXPECT_FALSE(built(object).has_value()) << text;
    }
}

TEST_F(ModelBuilderTest, AQuantityIsAnIntegerOrAQuantityString) {
    for (const std::string_view accelerator :
         {"1", R"("1")", R"("1500m")", "18446744073709551615", R"("2Ki")"}) {
        const json::value object =
            json::parse(R"({"spec": {"roles": [{"resources": {"accelerator": )" +
                        std::string(accelerator) + "}}]}}");
        const auto model = built(object);
        ASSERT_TRUE(model.has_value()) << accelerator;
        EXPECT_EQ(*model, decoded(object).model) << accelerator;
        EXPECT_TRUE(model->roles[0].resources.accelerator.has_value());
    }
}

TEST_F(ModelBuilderTest, AMemberItReadsGivenTwiceIsLeftToTheDecoder) {
    // A DOM keeps the last copy; events cannot know which is last.
    ModelBuilder twice(&memory);
    twice.begin_object();
    twice.key("spec");
    twice.begin_object();
    twice.end_object();
    twice.key("spec");
    twice.begin_object();
    twice.end_object();
    twice.end_object();
    EXPECT_TRUE(twice.gave_up());
    EXPECT_FALSE(twice.finish().has_value());

    // A volume's source, whose last copy might not be an object.
    ModelBuilder source(&memory);
    source.begin_object();
    source.key("spec");
    source.begin_object();
    source.key("roles");
    source.begin_array();
    source.begin_object();
    source.key("additionalVolumes");
    source.begin_array();
    source.begin_object();
    source.key("configMap");
    source.begin_object();
    source.end_object();
    source.key("configMap");
    EXPECT_TRUE(source.gave_up());

    // Members it does not read may repeat.
    ModelBuilder other(&memory);
    other.begin_object();
    other.key("status");
    other.null();
    other.key("status");
    other.null();
    other.key("spec");
    other.begin_object();
    other.end_object();
    other.end_object();
    EXPECT_TRUE(other.finish().has_value());
}

TEST_F(ModelBuilderTest, ListsBeyondWhatTheDecoderReadsAreLeftToIt) {
    json::array roles;
    for (std::size_t i = 0; i <= rules::limits::max_roles_read; ++i) {
        roles.push_back(json::object{{"name", "r" + std::to_string(i)}});
    }
    const json::value many_roles = json::object{{"spec", json::object{{"roles", roles}}}};
    EXPECT_TRUE(decoded(many_roles).problems.empty());
    EXPECT_FALSE(built(many_roles).has_value());

    json::array args(rules::limits::max_list_entries_read, json::value("--x"));
    const json::value at_the_limit = json::object{
        {"spec", json::object{{"roles", json::array{json::object{{"extraArgs", args}}}}}}};
    ASSERT_TRUE(built(at_the_limit).has_value());
    args.push_back("--y");
    const json::value over_the_limit = json::object{
        {"spec", json::object{{"roles", json::array{json::object{{"extraArgs", args}}}}}}};
    EXPECT_FALSE(built(over_the_limit).has_value());
}

TEST_F(ModelBuilderTest, TellsWhichMembersItReads) {
    ModelBuilder builder(&memory);
    builder.begin_object();
    builder.key("status");
    EXPECT_FALSE(builder.reads_value());
    builder.key("metadata");
    EXPECT_TRUE(builder.reads_value());
    builder.begin_object();
    builder.key("annotations");
    EXPECT_FALSE(builder.reads_value());
    builder.key("name");
    EXPECT_TRUE(builder.reads_value());
}

TEST_F(ModelBuilderTest, KeepsTheSourcesTextsAsViewsAndCopiesOthers) {
    const std::string source = R"({"spec": {"model": {"name": "qwen"}}})";
    const std::string_view name_in_source = std::string_view(source).substr(source.find("qwen"), 4);
    std::string transient = "a-role";
    ModelBuilder builder(&memory, source);
    builder.begin_object();
    builder.key("spec");
    builder.begin_object();
    builder.key("model");
    builder.begin_object();
    builder.key("name");
    builder.string(name_in_source);
    builder.end_object();
    builder.key("roles");
    builder.begin_array();
    builder.begin_object();
    builder.key("name");
    builder.string(transient);
    transient.assign("xxxxxx");  // a parser's buffer, reused
    builder.end_object();
    builder.end_array();
    builder.end_object();
    builder.end_object();
    const auto model = builder.finish();
    ASSERT_TRUE(model.has_value());
    EXPECT_EQ(model->model_name.data(), name_in_source.data());
    EXPECT_EQ(model->roles.at(0).name, "a-role");
}

// Every object of the rule tests: built exactly when the decoder finds nothing wrong, and then
// built as the decoder reads it.
TEST_F(ModelBuilderTest, BuildsEveryCaseObjectAsTheDecoderReadsIt) {
    const auto documents = inputs::read_inputs({std::string(MDADMIT_SOURCE_DIR) + "/test/cases"});
    ASSERT_TRUE(documents.ok()) << documents.error().message;
    const auto cases = inputs::parse_cases(documents.value());
    ASSERT_TRUE(cases.ok()) << cases.error().message;
    std::size_t built_objects = 0;
    for (const auto& test_case : cases.value()) {
        std::vector<const json::value*> objects;
        objects.push_back(&test_case.object);
        if (test_case.old_object) {
            objects.push_back(&*test_case.old_object);
        }
        for (const json::value* object : objects) {
            const rules::Decoded expected = decoded(*object);
            const auto model = built(*object);
            if (!expected.problems.empty()) {
                EXPECT_FALSE(model.has_value()) << test_case.label();
                continue;
            }
            ASSERT_TRUE(model.has_value()) << test_case.label();
            EXPECT_EQ(*model, expected.model) << test_case.label();
            ++built_objects;
        }
    }
    EXPECT_GT(built_objects, 100u);
}

}  // namespace
}  // namespace mdadmit::test
