// The review's own tokenizer: what it takes, it reads with the calls Boost.JSON's basic_parser
// makes; what Boost.JSON refuses, it does not take; and what it leaves to Boost.JSON by design
// (fractions, exponents, long integers, half surrogates, deep nesting), it does not take either.
#include "document_tokenizer.hpp"

#include "json_call_recorder.hpp"

#include <gtest/gtest.h>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/string.hpp>
#include <optional>
#include <string>
#include <vector>

namespace mdadmit::test {
namespace {

namespace json = boost::json;
using boost::system::error_code;

constexpr std::size_t max_depth = 32;

// Boost.JSON's calls for `text` given in one piece, or nullopt where it refuses the text.
std::optional<std::vector<std::string>> boost_calls(std::string_view text) {
    return boost_parser_calls(text, max_depth);
}

// The tokenizer's calls for `text`, or nullopt where it does not take the text; the value of
// each key named `left_out` is one the handler leaves out.
std::optional<std::vector<std::string>> own_calls(std::string_view text,
                                                  std::string_view left_out = {}) {
    JsonCallRecorder recorder;
    std::string unescaped;
    const std::string key_call = "key " + std::string(left_out) + " ";
    const auto leaves_out = [&] {
        return !left_out.empty() && !recorder.calls.empty() &&
               recorder.calls.back().starts_with(key_call);
    };
    if (!admission::tokenize_document(text, max_depth, leaves_out, recorder, unescaped)) {
        return std::nullopt;
    }
    return recorder.calls;
}

TEST(DocumentTokenizer, TakesWhatBoostReadsWithTheSameCalls) {
    const std::string_view texts[] = {
        R"({})",
        R"([])",
        R"("")",
        R"(0)",
        R"(-0)",
        R"(true)",
        " \t\r\n null \t\r\n ",
        R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u"}})",
        R"({ "a" : [ 1 , -2 , true , false , null , { } , [ ] , "" ] , "b" : { "c" : { } } })",
        R"([[[[[]]]], {"x": [{}, {"y": []}]}, [1, [2, [3]]]])",
        R"({"same": 1, "same": 2})",
        R"([123456789012345678, -123456789012345678, 10, -7, 0])",
        R"(["a string longer than sixteen bytes, and then some more of it", "0123456789abcde"])",
        R"({"escapes \" \\ \/ \b \f \n \r \t": "\u0041\u00e9\u20ac\u0000 and \"quoted\""})",
        "{\"caf\xc3\xa9\": \"\xe2\x82\xac \xf0\x9f\x98\x80 \xed\x9f\xbf \xf4\x8f\xbf\xbf\"}",
        R"({"k8s": {"metadata": {"name": "a", "labels": {"app": "x"}}, "spec": {"size": 2}}})",
    };
    for (const std::string_view text : texts) {
        const auto expected = boost_calls(text);
        ASSERT_TRUE(expected.has_value()) << text;
        EXPECT_EQ(own_calls(text), expected) << text;
    }
}

TEST(DocumentTokenizer, TakesStringsOfEveryLengthWhereverTheirEscapesFall) {
    // Strings end, and escapes and UTF-8 sequences fall, at every place of the sixteen and
    // thirty-two bytes the scans look at a time and past the end of the last whole step.
    for (std::size_t length = 0; length <= 72; ++length) {
        for (const std::string_view piece : {"", "\\\"", "\\n", "\\u00e9", "\xc3\xa9"}) {
            for (std::size_t at = 0; at <= length; ++at) {
                std::string value(length, 'x');
                value.insert(at, piece);
                const std::string text = "[\"" + value + "\",\"" + value + "\"]";
                const auto expected = boost_calls(text);
                ASSERT_TRUE(expected.has_value()) << text;
                EXPECT_EQ(own_calls(text), expected) << text;
            }
        }
    }
}

TEST(DocumentTokenizer, TakesNothingBoostRefuses) {
    for (const std::string_view text : {
             "",
             " ",
             R"({)",
             R"({"a")",
             R"({"a":)",
             R"({"a":1)",
             R"({"a":1,})",
             R"([1,])",
             R"([1 2])",
             R"({"a" 1})",
             R"({1: 2})",
             R"({"a":1]})",
             R"([1})",
             R"({} {})",
             R"({}x)",
             R"(nul)",
             R"(nulls)",
             R"(tru)",
             R"(falsey)",
             R"(01)",
             R"(-)",
             R"(-a)",
             R"(+1)",
             R"(1.)",
             R"(.5)",
             R"("unterminated)",
             R"("bad \x escape")",
             R"("bad \u12 escape")",
             "\"a control \x01 byte\"",
             "\"a tab \t inside\"",
             "\"invalid UTF-8 \xc3\x28\"",
             "\"an overlong form \xc0\xaf\"",
             "\"a surrogate written in UTF-8 \xed\xa0\x80\"",
             "\"a truncated sequence \xe2\x82\"",
             R"(// a comment
                {})",
             R"({"a": /* a comment */ 1})",
             R"(['single'])",
             R"({"a": NaN})",
         }) {
        EXPECT_FALSE(boost_calls(text).has_value()) << text;
        EXPECT_FALSE(own_calls(text).has_value()) << text;
    }
}

TEST(DocumentTokenizer, LeavesNumbersOtherThanShortIntegersToBoost) {
    for (const std::string_view text : {
             R"([0.5])",
             R"([1e3])",
             R"([1E3])",
             R"([-0.0])",
             R"([1234567890123456789])",
             R"([-1234567890123456789])",
             R"([18446744073709551615])",
             R"([1e999])",
         }) {
        EXPECT_TRUE(boost_calls(text).has_value()) << text;
        EXPECT_FALSE(own_calls(text).has_value()) << text;
    }
}

TEST(DocumentTokenizer, LeavesHalfSurrogatesToBoost) {
    // A pair is one code point to Boost.JSON; half of one is an error, unless it is told to take
    // invalid UTF-8. Either way the tokenizer does not decide.
    EXPECT_TRUE(boost_calls(R"(["\ud83d\ude00"])").has_value());
    EXPECT_FALSE(own_calls(R"(["\ud83d\ude00"])").has_value());
    EXPECT_FALSE(own_calls(R"(["\ud83d"])").has_value());
}

TEST(DocumentTokenizer, LeavesNestingDeeperThanItsLimitToBoost) {
    const auto nested = [](std::size_t depth) {
        return std::string(depth, '[') + std::string(depth, ']');
    };
    EXPECT_EQ(own_calls(nested(max_depth)), boost_calls(nested(max_depth)));
    EXPECT_FALSE(boost_calls(nested(max_depth + 1)).has_value());
    EXPECT_FALSE(own_calls(nested(max_depth + 1)).has_value());

    JsonCallRecorder recorder;
    std::string unescaped;
    const std::string deepest = nested(admission::tokenizer_most_nesting);
    EXPECT_TRUE(admission::tokenize_document(
        deepest, admission::tokenizer_most_nesting, [] { return false; }, recorder, unescaped));
    const std::string deeper = nested(admission::tokenizer_most_nesting + 1);
    EXPECT_FALSE(admission::tokenize_document(
        deeper, 1000, [] { return false; }, recorder, unescaped));
}

TEST(DocumentTokenizer, GivesALeftOutValueAsNull) {
    EXPECT_EQ(own_calls(R"({"a": {"big": [1, 2, {"c": "\u00e9"}]}, "b": "x", "big": "s"})", "big"),
              boost_calls(R"({"a": {"big": null}, "b": "x", "big": null})"));
    EXPECT_EQ(own_calls(R"({"a": {"big": 1}})", "other"), boost_calls(R"({"a": {"big": 1}})"));
}

TEST(DocumentTokenizer, StillChecksALeftOutValue) {
    for (const std::string_view text : {
             R"({"big": [1, 2,]})",
             R"({"big": {"a" 1}})",
             R"({"big": "unterminated})",
             R"({"big": nul})",
             "{\"big\": \"\xc3\x28\"}",
         }) {
        EXPECT_FALSE(boost_calls(text).has_value()) << text;
        EXPECT_FALSE(own_calls(text, "big").has_value()) << text;
    }
    // What the check leaves to Boost.JSON, the tokenizer does too.
    EXPECT_FALSE(own_calls(R"({"big": [1e3]})", "big").has_value());
    // The value may nest as deep as the document's limit leaves room for, and no deeper.
    const auto nested = [](std::size_t depth) {
        return R"({"big": )" + std::string(depth, '[') + std::string(depth, ']') + "}";
    };
    EXPECT_TRUE(own_calls(nested(max_depth - 1), "big").has_value());
    EXPECT_TRUE(boost_calls(nested(max_depth - 1)).has_value());
    EXPECT_FALSE(own_calls(nested(max_depth), "big").has_value());
    EXPECT_FALSE(boost_calls(nested(max_depth)).has_value());
}

TEST(DocumentTokenizer, StopsWhereTheHandlerRefuses) {
    struct Refusing : JsonCallRecorder {
        bool on_int64(std::int64_t, json::string_view, error_code&) { return false; }
    } refusing;
    std::string unescaped;
    EXPECT_FALSE(admission::tokenize_document(R"({"a": [true, 1]})", max_depth,
                                              [] { return false; }, refusing, unescaped));
    EXPECT_EQ(refusing.calls, (std::vector<std::string>{"begin", "{", "key a 1", "[", "true"}));
}

}  // namespace
}  // namespace mdadmit::test
