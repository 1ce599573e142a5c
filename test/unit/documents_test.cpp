// Reading manifests: YAML typing, multi-document files, JSON, and errors with lines.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "mdadmit/inputs/documents.hpp"

namespace mdadmit::test {
namespace {

namespace json = boost::json;

TEST(Documents, YamlScalarsFollowTheCoreSchema) {
    const auto docs = inputs::parse_documents(
        "a: 1\nb: '1'\nc: true\nd: ~\ne: 1.5\nf: --port\ng: 99999999999999999999\n", "t");
    ASSERT_TRUE(docs.ok());
    const auto& v = docs.value().at(0).value;
    EXPECT_EQ(v.at("a"), json::value(1));
    EXPECT_EQ(v.at("b"), json::value("1"));
    EXPECT_EQ(v.at("c"), json::value(true));
    EXPECT_TRUE(v.at("d").is_null());
    EXPECT_EQ(v.at("e"), json::value(1.5));
    EXPECT_EQ(v.at("f"), json::value("--port"));
    EXPECT_EQ(v.at("g"), json::value("99999999999999999999"));
}

TEST(Documents, MultiDocumentYamlKeepsIndicesAndLines) {
    const auto docs = inputs::parse_documents("kind: A\n---\n---\n# c\nkind: B\n", "f.yaml");
    ASSERT_TRUE(docs.ok());
    ASSERT_EQ(docs.value().size(), 2u);
    EXPECT_EQ(docs.value()[1].index, 3u);
    EXPECT_EQ(docs.value()[1].line, 5u);
    EXPECT_EQ(inputs::kind_of(docs.value()[1].value), "B");
}

TEST(Documents, ErrorsNameTheFileAndLine) {
    const auto bad_yaml = inputs::parse_documents("a: 1\nb: [1, 2\n", "bad.yaml");
    ASSERT_FALSE(bad_yaml.ok());
    EXPECT_EQ(bad_yaml.error().message.rfind("bad.yaml:3:", 0), 0u) << bad_yaml.error().message;
    const auto bad_json = inputs::parse_documents("{\"a\": }", "bad.json");
    ASSERT_FALSE(bad_json.ok());
    EXPECT_EQ(bad_json.error().message.rfind("bad.json: invalid JSON at byte", 0), 0u)
        << bad_json.error().message;
    EXPECT_EQ(inputs::read_documents("/nonexistent.yaml").error().message,
              "/nonexistent.yaml: cannot open the file");
}

TEST(Documents, NumbersBeyondADoubleAreRefusedWithTheirLine) {
    for (const char* number : {"1e999", "-1e999", "1e-400"}) {
        const auto parsed =
            inputs::parse_documents(std::string("kind: X\nspec:\n  a: ") + number, "big.yaml");
        ASSERT_FALSE(parsed.ok()) << number;
        EXPECT_EQ(parsed.error().message,
                  std::string("big.yaml:3:6: not valid YAML or JSON: the number ") + number +
                      " is out of range");
    }
    const auto fine = inputs::parse_documents("a: 1.5e300\nb: '1e999'", "fine.yaml");
    ASSERT_TRUE(fine.ok()) << fine.error().message;
    EXPECT_EQ(fine.value()[0].value.at("a").as_double(), 1.5e300);
    EXPECT_EQ(fine.value()[0].value.at("b").as_string(), "1e999");
}

// Inputs on which a YAML reader without bounds never returns or grows without end.
TEST(Documents, HostileYamlIsRefusedWithItsLine) {
    const std::vector<std::pair<std::string, std::string>> cases{
        {",", "hostile.yaml:1:1: not valid YAML or JSON: "},
        {"!sps, wrieche-nd\"kd", "hostile.yaml:1:"},
        {"a: &a [x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
         "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, "
         "*c, *c]\n"
         "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e, *e, *e, "
         "*e]\n",
         "hostile.yaml:5:16: not valid YAML or JSON: aliases copy more values than the document "
         "holds"},
        {"a: *nowhere\n", "hostile.yaml:1:4: not valid YAML or JSON: unknown anchor *nowhere"},
        {"? [a]\n: b\n",
         "hostile.yaml:1:3: not valid YAML or JSON: a mapping key must be a plain value"},
    };
    for (const auto& [text, prefix] : cases) {
        const auto parsed = inputs::parse_documents(text, "hostile.yaml");
        ASSERT_FALSE(parsed.ok()) << text;
        EXPECT_EQ(parsed.error().message.rfind(prefix, 0), 0u) << parsed.error().message;
    }
    EXPECT_EQ(
        inputs::parse_documents("a: " + std::string(100, '[') + std::string(100, ']'), "deep.yaml")
            .error()
            .message,
        "deep.yaml:1:67: not valid YAML or JSON: nesting deeper than 64 levels");
    EXPECT_EQ(
        inputs::parse_documents(std::string(17 * 1024 * 1024, ' '), "huge.yaml").error().message,
        "huge.yaml: larger than 16 MiB, the most a manifest file may hold");
}

// Boost.JSON reads 1e400 as infinity and 0e400 as NaN, which no JSON can spell again and which
// is unequal to itself: refused like any number beyond a double.
TEST(Documents, JsonNumbersBeyondADoubleAreRefused) {
    for (const char* text : {"[0E840080000]", "{\"a\": 1e400}", "{\"a\": [-1E999]}"}) {
        const auto parsed = inputs::parse_documents(text, "big.json");
        ASSERT_FALSE(parsed.ok()) << text;
        EXPECT_EQ(parsed.error().message,
                  "big.json: invalid JSON: a number beyond the range of a double");
    }
    EXPECT_TRUE(inputs::parse_documents("{\"a\": 1e300, \"b\": 0e10}", "fine.json").ok());
}

TEST(Documents, AnchorsAndAliasesWithinBoundsAreCopied) {
    const auto docs = inputs::parse_documents(
        "base: &env [{name: A, value: '1'}]\nroles:\n- env: *env\n- env: *env\n", "a.yaml");
    ASSERT_TRUE(docs.ok()) << docs.error().message;
    const auto& roles = docs.value()[0].value.at("roles").as_array();
    EXPECT_EQ(roles.at(1).at("env"), docs.value()[0].value.at("base"));
    EXPECT_EQ(roles.at(1).at("env").at(0).at("value"), json::value("1"));
}

TEST(Documents, InstanceTypesAreCollectedByName) {
    const auto docs = inputs::parse_documents(
        "kind: InstanceType\nmetadata: {name: a}\nstatus: {detail: {manufacturer: AMD}}\n---\n"
        "kind: InstanceType\nmetadata: {name: b}\n---\nkind: Other\nmetadata: {name: c}\n",
        "t");
    rules::InstanceTypes types;
    inputs::collect_instance_types(docs.value(), types);
    ASSERT_EQ(types.size(), 2u);
    EXPECT_EQ(types.at("a").manufacturer, "AMD");
    EXPECT_EQ(types.at("a").platform(), rules::Platform::amd);
    EXPECT_EQ(types.at("b").manufacturer, "");
}

}  // namespace
}  // namespace mdadmit::test
