// Finding a review's annotations and checking them as JSON without decoding them: a value taken
// is one Boost.JSON reads without error, wherever its escapes and UTF-8 sequences fall.
#include "left_out_values.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

namespace mdadmit::test {
namespace {

namespace json = boost::json;
using admission::find_left_out_values;
using admission::is_checked_json_value;

constexpr std::size_t deep = 60;

// Whether Boost.JSON reads `text` as a whole document, every number a finite one.
bool boost_reads(std::string_view text, std::size_t max_depth = deep) {
    json::parse_options options;
    options.max_depth = max_depth;
    boost::system::error_code ec;
    const json::value value = json::parse(text, ec, {}, options);
    if (ec) {
        return false;
    }
    std::vector<const json::value*> pending{&value};
    while (!pending.empty()) {
        const json::value* next = pending.back();
        pending.pop_back();
        if (next->is_double() && !std::isfinite(next->get_double())) {
            return false;
        }
        if (next->is_array()) {
            for (const json::value& element : next->get_array()) {
                pending.push_back(&element);
            }
        } else if (next->is_object()) {
            for (const auto& member : next->get_object()) {
                pending.push_back(&member.value());
            }
        }
    }
    return true;
}

TEST(CheckedJsonValue, TakesWhatBoostReads) {
    for (const std::string_view text : {
             R"("")",
             R"("plain")",
             R"("{\"apiVersion\":\"v1\",\"kind\":\"ModelDeployment\"}\n")",
             R"("\\ \/ \b \f \n \r \t \u00e9 \u20AC")",
             "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xed\x9f\xbf \xf4\x8f\xbf\xbf\"",
             R"({})",
             R"([])",
             R"({"a": [1, -2, 0.5, -0, true, false, null], "b": {"c": {}}})",
             "[ 1 , \"x\" ,\n\t{ \"k\" :\r\n[] } ]",
             R"({"kubectl.kubernetes.io/last-applied-configuration": "{\"a\":1}\n"})",
         }) {
        EXPECT_TRUE(is_checked_json_value(text, deep)) << text;
        EXPECT_TRUE(boost_reads(text)) << text;
    }
}

TEST(CheckedJsonValue, RefusesWhatBoostRefuses) {
    for (const std::string_view text : {
             R"("unterminated)",
             R"("bad escape \x")",
             R"("short \u12")",
             R"("not hex \u12g4")",
             "\"a raw\ttab\"",
             "\"a raw\nnewline\"",
             "\"lone continuation \x80\"",
             "\"overlong \xc0\xaf\"",
             "\"surrogate \xed\xa0\x80\"",
             "\"past U+10FFFF \xf4\x90\x80\x80\"",
             "\"truncated \xe2\x82\"",
             "\"invalid \xff\"",
             R"({"a": 1,})",
             R"([1, 2,])",
             R"({"a" 1})",
             R"({a: 1})",
             R"({"a": 01})",
             R"({"a": -})",
             R"({"a": 1.})",
             R"({"a": .5})",
             R"({"a": tru})",
             R"({"a": nul})",
             R"({"a": 1} x)",
             R"([1 2])",
             R"({"a": /* comment */ 1})",
             R"({"a": 1)",
             R"()",
         }) {
        EXPECT_FALSE(is_checked_json_value(text, deep)) << text;
        EXPECT_FALSE(boost_reads(text)) << text;
    }
}

TEST(CheckedJsonValue, LeavesToBoostWhatItDoesNotCheck) {
    // Boost.JSON reads these; the check says only that it has not checked them.
    for (const std::string_view text : {
             R"({"time": 1e3})",
             R"({"half a pair written twice": "\ud83d\ude00"})",
         }) {
        EXPECT_TRUE(boost_reads(text)) << text;
    }
    EXPECT_FALSE(is_checked_json_value(R"({"time": 1e3})", deep));
    EXPECT_FALSE(is_checked_json_value(R"("\ud83d\ude00")", deep));
    EXPECT_FALSE(is_checked_json_value(std::string(301, '1'), deep));
    EXPECT_TRUE(is_checked_json_value(std::string(300, '1'), deep));
}

TEST(CheckedJsonValue, CountsTheContainersNested) {
    const std::string ten = std::string(5, '[') + R"({"a": {"b": [[{}]]}})" + std::string(5, ']');
    EXPECT_TRUE(is_checked_json_value(ten, 10));
    EXPECT_FALSE(is_checked_json_value(ten, 9));
    EXPECT_TRUE(boost_reads(ten, 10));
    EXPECT_FALSE(boost_reads(ten, 9));
}

// Whether the check takes `text` held in a heap block of exactly its size: AddressSanitizer then
// reports any read past its end, which a std::string's NUL would hide.
bool checked_in_exact_block(std::string_view text) {
    const auto block = std::make_unique<char[]>(text.size());
    std::copy(text.begin(), text.end(), block.get());
    return is_checked_json_value(std::string_view(block.get(), text.size()), deep);
}

// Every escape and UTF-8 sequence at every place of a long string, across the sixteen- and
// thirty-two-byte steps the scan takes: taken exactly when Boost.JSON reads it, and always when it
// is valid.
TEST(CheckedJsonValue, AnyEscapeAtAnyPlaceOfALongString) {
    const std::vector<std::string> valid = {R"(\")",        R"(\\)",
                                            R"(\/)",        R"(\n)",
                                            R"(\u00e9)",    R"(\\\")",
                                            R"(\\\\)",      "\xc3\xa9",
                                            "\xe2\x82\xac", "\xf0\x9f\x98\x80",
                                            R"(\"\"\"\")",  R"(\"\n\"\u00e9\"\/\")"};
    // Escaped quotes, which the scan passes sixteen bytes at a time, before what it must refuse.
    const std::vector<std::string> invalid = {R"(\x)",    R"(\)",         "\x01", "\xc3",
                                              "\xe2\x82", "\xf0\x9f\x98", "\xff", R"(\u00)",
                                              R"(\"\x)",  R"(\"\"\"\q\")"};
    for (std::size_t place = 0; place < 72; ++place) {
        for (const std::size_t tail : {0, 1, 15, 16, 17, 31, 32, 33, 40}) {
            for (const std::string& piece : valid) {
                const std::string text =
                    '"' + std::string(place, 'x') + piece + std::string(tail, 'y') + '"';
                EXPECT_TRUE(checked_in_exact_block(text)) << text;
                EXPECT_TRUE(boost_reads(text)) << text;
            }
            for (const std::string& piece : invalid) {
                const std::string text =
                    '"' + std::string(place, 'x') + piece + std::string(tail, 'y') + '"';
                EXPECT_FALSE(checked_in_exact_block(text)) << text;
                EXPECT_FALSE(boost_reads(text)) << text;
            }
        }
    }
}

std::vector<std::string_view> values_of(std::string_view body) {
    std::vector<std::string_view> values;
    for (const auto& value : find_left_out_values(body, deep)) {
        values.push_back(body.substr(value.begin, value.end - value.begin));
    }
    return values;
}

TEST(LeftOutValues, FindsEachAnnotationsValueOnceInBodyOrder) {
    const std::string body = R"({"request": {"object": {"metadata": {"annotations" :
        {"kubectl.kubernetes.io/last-applied-configuration": "{\"metadata\":{\"annotations\":{}}}"},
        "name": "a"}}, "oldObject": {"metadata": {"annotations":{"a": "b"}}}}})";
    EXPECT_EQ(
        values_of(body),
        (std::vector<std::string_view>{
            R"({"kubectl.kubernetes.io/last-applied-configuration": "{\"metadata\":{\"annotations\":{}}}"})",
            R"({"a": "b"})"}));
}

TEST(LeftOutValues, OnlyAKeyFollowedByItsColonAndACheckedValue) {
    EXPECT_EQ(values_of(R"({"kind": "annotations", "x": ["annotations"], "e": "\n"})"),
              std::vector<std::string_view>{});
    // A value the check does not take is not given, and ends the search: what it holds is not
    // looked at again.
    EXPECT_EQ(values_of(R"({"annotations": {"a": "\n"}, "b": {"annotations": {"a": 1e3}},
                            "c": {"annotations": {"e": "\n"}}})"),
              std::vector<std::string_view>{R"({"a": "\n"})"});
    EXPECT_EQ(values_of(R"({"annotations": {"annotations": {"e": "\n"}, "t": 1e3}})"),
              std::vector<std::string_view>{});
    EXPECT_EQ(values_of(R"({"e": "\n", "annotations": )"), std::vector<std::string_view>{});
}

// The annotations of an object applied with kubectl (its last applied form), then what
// kube-apiserver may write after them in metadata.
std::string applied_metadata(std::string_view after_annotations) {
    return R"({"request": {"object": {"metadata": {"name": "a", "annotations": {"last-applied": "{\"a\":1}"})" +
           std::string(after_annotations) + R"(}, "spec": {}}}})";
}

TEST(LeftOutValues, TheManagedFieldsThatFollowAnnotationsFound) {
    constexpr std::string_view annotations = R"({"last-applied": "{\"a\":1}"})";
    constexpr std::string_view managed_fields =
        R"([{"manager": "kubectl-client-side-apply", "fieldsV1": {"f:spec": {".": {}}}}])";
    for (const std::string& after : {
             ", \"managedFields\": " + std::string(managed_fields),
             R"(, "ownerReferences": [{"name": "o", "uid": "1"}], "finalizers": ["f"], )"
             R"("managedFields": )" +
                 std::string(managed_fields),
             R"(,"finalizers":[],"managedFields":)" + std::string(managed_fields),
             "\n, \"managedFields\" :\t" + std::string(managed_fields),
         }) {
        EXPECT_EQ(values_of(applied_metadata(after)),
                  (std::vector<std::string_view>{annotations, managed_fields}))
            << after;
    }
    // Another member between them, or one the check does not take, leaves managedFields to the
    // tokenizer, as does a name written otherwise.
    for (const std::string_view after : {
             R"(, "labels": {}, "managedFields": [])",
             R"(, "finalizers": [1e3], "managedFields": [])",
             R"(, "managedFields": [1e3])",
             R"(, "managed\u0046ields": [])",
             R"(, "managedFields": [)",
         }) {
        EXPECT_EQ(values_of(applied_metadata(after)), (std::vector<std::string_view>{annotations}))
            << after;
    }
    // What the walk to managedFields meets and the check does not take ends the search, as a
    // value found does: a later object's annotations are left to the tokenizer.
    EXPECT_EQ(values_of(R"({"a": {"annotations": {"x": "\\"}, "managedFields": [1e3]},
                            "b": {"annotations": {"y": "\\"}}})"),
              std::vector<std::string_view>{R"({"x": "\\"})"});
    // Not looked for without annotations found before it.
    EXPECT_EQ(values_of(R"({"e": "\n", "managedFields": [{"manager": "m"}]})"),
              std::vector<std::string_view>{});
}

TEST(LeftOutValues, NoneWhereNoStringHasAnEscape) {
    // Without a backslash the tokenizer reads an annotation as fast as the check would.
    EXPECT_EQ(values_of(R"({"annotations": {"a": "b"}})"), std::vector<std::string_view>{});
    EXPECT_EQ(values_of(R"({"annotations": {"a": "b\""}})"),
              std::vector<std::string_view>{R"({"a": "b\""})"});
}

}  // namespace
}  // namespace mdadmit::test
