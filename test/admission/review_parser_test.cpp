// The review parser: the DOM of a review, less the object's annotations and managedFields and
// the parts of the envelope admission does not read.
#include "review_parser.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <memory_resource>
#include <string>

#include "mdadmit/rules/model_builder.hpp"

namespace mdadmit::test {
namespace {

namespace json = boost::json;
using admission::ReviewParser;

json::parse_options options_with_depth(std::size_t depth) {
    json::parse_options options;
    options.max_depth = depth;
    return options;
}

class ReviewParserTest : public testing::Test {
  protected:
    // The parsed document, or the error's message.
    json::value parsed(std::string_view body) {
        parser.reset(json::storage_ptr());
        boost::system::error_code ec;
        json::value document = parser.write(body, ec);
        error = ec ? ec.message() : "";
        return document;
    }

    ReviewParser parser{options_with_depth(32)};
    std::string error;
};

TEST_F(ReviewParserTest, LeavesOutTheObjectsAnnotationsAndManagedFields) {
    const json::value document = parsed(R"({"kind": "AdmissionReview", "request": {
        "uid": "u",
        "object": {"metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{\"spec\":{}}"},
                                "name": "a",
                                "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}],
                                "labels": {"app": "x"}},
                   "spec": {"size": 2}},
        "oldObject": {"metadata": {"name": "a", "managedFields": [], "annotations": {}}}}})");
    ASSERT_EQ(error, "");
    EXPECT_EQ(document, json::parse(R"({"kind": "AdmissionReview", "request": {
        "uid": "u",
        "object": {"metadata": {"name": "a", "labels": {"app": "x"}}, "spec": {"size": 2}},
        "oldObject": {"metadata": {"name": "a"}}}})"));
}

TEST_F(ReviewParserTest, LeavesOutWhatDescribesTheRequestBesidesItsKindAndUser) {
    const json::value document = parsed(R"({"kind": "AdmissionReview", "request": {
        "uid": "u",
        "kind": {"group": "worker.gpustack.ai", "version": "v1", "kind": "ModelDeployment"},
        "resource": {"group": "worker.gpustack.ai", "version": "v1", "resource": "modeldeployments"},
        "requestKind": {"group": "worker.gpustack.ai", "version": "v1", "kind": "ModelDeployment"},
        "requestResource": {"group": "worker.gpustack.ai", "version": "v1", "resource": "modeldeployments"},
        "operation": "CREATE",
        "userInfo": {"username": "alice", "uid": "1001", "groups": ["system:authenticated"],
                     "extra": {"scopes": ["a"]}},
        "object": {"metadata": {"name": "a"}},
        "oldObject": null,
        "dryRun": false,
        "options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}}})");
    ASSERT_EQ(error, "");
    EXPECT_EQ(document, json::parse(R"({"kind": "AdmissionReview", "request": {
        "uid": "u",
        "kind": {"group": "worker.gpustack.ai", "version": "v1", "kind": "ModelDeployment"},
        "operation": "CREATE",
        "userInfo": {"username": "alice"},
        "object": {"metadata": {"name": "a"}},
        "oldObject": null,
        "dryRun": false}})"));
}

TEST_F(ReviewParserTest, KeepsTheSameNamesEverywhereElse) {
    const std::string body = R"([{"request": {"object": {"metadata": {"annotations": {}}}}}])";
    EXPECT_EQ(parsed(body), json::parse(body));
    const std::string elsewhere = R"({
        "metadata": {"annotations": {"a": "b"}},
        "request": {"annotations": 1, "metadata": {"managedFields": []},
                    "kind": {"object": {"metadata": {"annotations": {}}}},
                    "object": {"spec": {"metadata": {"annotations": {}}}, "annotations": {},
                               "metadata": {"labels": {"managedFields": "x"}}},
                    "oldObject": [{"metadata": {"annotations": {}}}],
                    "userInfo": {"username": {"groups": [], "uid": "1"}},
                    "status": {"metadata": {"managedFields": []}, "options": {}}},
        "options": {}, "uid": "u", "groups": []})";
    EXPECT_EQ(parsed(elsewhere), json::parse(elsewhere));
}

TEST_F(ReviewParserTest, AKeyIsTheNameItsEscapesSpell) {
    const json::value document = parsed(
        R"({"request": {"\u006fbject": {"metadata": {"annot\u0061tions": {}, "n\u0061me": "a"}},
                        "requestR\u0065source": {}, "requestR\u0065sources": {}}})");
    ASSERT_EQ(error, "");
    EXPECT_EQ(document, json::parse(R"({"request": {"object": {"metadata": {"name": "a"}},
                                                     "requestResources": {}}})"));
}

TEST_F(ReviewParserTest, EscapesOnTheWayToALeftOutMemberSpellTheirNames) {
    const json::value document = parsed(
        R"({"r\u0065quest": {"us\u0065rInfo": {"\u0075id": "1", "username": "alice",
                                                "gr\u006fups": ["a"], "extr\u0061": {}},
                             "requ\u0065stKind": {"kind": "ModelDeployment"},
                             "\u0072esource": {}, "opti\u006fns": {}}})");
    ASSERT_EQ(error, "");
    EXPECT_EQ(document, json::parse(R"({"request": {"userInfo": {"username": "alice"}}})"));
}

TEST_F(ReviewParserTest, AKeyLongerThanAnyLeftOutNameIsKeptWholeWhereverItsEscapesFall) {
    // Boost.JSON hands a key with escapes over in parts; the parser holds the parts while they
    // may still spell a name it leaves out, and gives them back once the key is longer.
    const std::string long_tail(5000, 'b');
    const std::string body =
        R"({"request": {"requestResourc\u0065s": 1, "requestResourceX\u0041": 2,
                                             "\u0061)" +
        long_tail + R"(": 3,
                                             "userInfo": {"usernam\u0065": "a", "\u0065xtras": 4}}})";
    const json::value document = parsed(body);
    ASSERT_EQ(error, "");
    EXPECT_EQ(document, json::parse(body));
    EXPECT_TRUE(document.at("request").as_object().contains("a" + long_tail));
}

TEST_F(ReviewParserTest, ADuplicatedStepIsFollowedEachTime) {
    // The DOM keeps the last of duplicated members, as Boost.JSON's own parser does; each copy
    // of a step leaves out what it holds.
    const json::value document = parsed(R"({"request": {
        "object": {"metadata": {"annotations": {"a": "1"}, "name": "first"}},
        "object": {"metadata": {"name": "second", "managedFields": [], "annotations": {}},
                   "metadata": {"annotations": {"b": "2"}, "name": "third"}},
        "userInfo": {"uid": "1"}, "userInfo": {"username": "alice", "uid": "2"}}})");
    ASSERT_EQ(error, "");
    EXPECT_EQ(document, json::parse(R"({"request": {"object": {"metadata": {"name": "third"}},
                                                     "userInfo": {"username": "alice"}}})"));
}

TEST_F(ReviewParserTest, AStepThatIsNoObjectIsKeptAsItIs) {
    const std::string scalars = R"({"request": {"object": "x", "oldObject": 5, "userInfo": "alice",
                                                "resource": null}})";
    EXPECT_EQ(parsed(scalars), json::parse(R"({"request": {"object": "x", "oldObject": 5,
                                                           "userInfo": "alice"}})"));
    EXPECT_EQ(error, "");
    const std::string arrays = R"({"request": {"object": {"metadata": [{"annotations": {}}]},
                                               "userInfo": [{"uid": "1"}], "requestKind": []}})";
    EXPECT_EQ(parsed(arrays),
              json::parse(R"({"request": {"object": {"metadata": [{"annotations": {}}]},
                                                          "userInfo": [{"uid": "1"}]}})"));
    EXPECT_EQ(error, "");
    const std::string request_array =
        R"({"request": [{"object": {"metadata": {"annotations": {}}}}]})";
    EXPECT_EQ(parsed(request_array), json::parse(request_array));
    const std::string empty = R"({"request": {"userInfo": {}, "object": {"metadata": {}}}})";
    EXPECT_EQ(parsed(empty), json::parse(empty));
}

TEST_F(ReviewParserTest, ALeftOutMemberIsStillReadAsJson) {
    parsed(R"({"request": {"object": {"metadata": {"annotations": {"a": tru}}}}})");
    EXPECT_NE(error, "");
    EXPECT_FALSE(parser.non_finite());

    parsed(R"({"request": {"object": {"metadata": {"managedFields": [{"time": 1e999}]}}}})");
    EXPECT_NE(error, "");
    EXPECT_TRUE(parser.non_finite());
}

TEST_F(ReviewParserTest, ANumberBeyondADoubleIsRefusedAndNamedSo) {
    parsed(R"({"request": {"object": {"spec": {"size": -1e400}}}})");
    EXPECT_NE(error, "");
    EXPECT_TRUE(parser.non_finite());

    parsed(R"({"request": {"object": {"spec": {"size": 1e300}}}})");
    EXPECT_EQ(error, "");
    EXPECT_FALSE(parser.non_finite());
}

TEST_F(ReviewParserTest, EachDocumentIsReadAfreshWhereverTheLastOneStopped) {
    // The first stops inside a left-out member, three containers deep.
    parsed(R"({"request": {"object": {"metadata": {"managedFields": [{"a": [{"b": )");
    EXPECT_NE(error, "");
    const std::string body = R"({"request": {"object": {"metadata": {"name": "a"}}}})";
    EXPECT_EQ(parsed(body), json::parse(body));
    EXPECT_EQ(error, "");
}

TEST_F(ReviewParserTest, TrailingBytesAndTooDeepNestingAreErrors) {
    parsed(R"({"request": {}} {})");
    EXPECT_NE(error, "");
    EXPECT_FALSE(parser.non_finite());

    const std::string deep = std::string(33, '[') + std::string(33, ']');
    parsed(deep);
    EXPECT_NE(error, "");
    const std::string deep_in_left_out =
        R"({"request": {"object": {"metadata": {"managedFields": )" + std::string(29, '[') +
        std::string(29, ']') + "}}}}";
    parsed(deep_in_left_out);
    EXPECT_NE(error, "");
}

// What Boost.JSON reads of `body`, less the annotations of the request's object and oldObject,
// or its error's message.
std::string boost_reads_less_annotations(std::string_view body, json::value& document) {
    boost::system::error_code ec;
    document = json::parse(body, ec, {}, options_with_depth(32));
    if (ec) {
        return ec.message();
    }
    for (const std::string_view name : {"object", "oldObject"}) {
        json::value* object = document.at("request").as_object().if_contains(name);
        if (object != nullptr && object->is_object()) {
            object->as_object().at("metadata").as_object().erase("annotations");
        }
    }
    return "";
}

// A kubectl apply's last applied form: the manifest's JSON as one string of escaped quotes,
// longer than the sixteen bytes the check looks at a time.
constexpr std::string_view applied_form =
    R"("{\"apiVersion\":\"worker.gpustack.ai/v1\",\"kind\":\"ModelDeployment\",)"
    R"(\"metadata\":{\"annotations\":{},\"name\":\"caf\u00e9 \\\"chat\\\"\"},)"
    R"(\"spec\":{\"roles\":[{\"name\":\"r\"}]}}\n")";

std::string review_with_annotations(std::string_view annotations) {
    return std::string(
               R"({"request": {"uid": "\/", "operation": "UPDATE", "object": {"metadata": {"name": "a",
        "annotations": )") +
           std::string(annotations) + R"(, "labels": {"x": "y"}}, "spec": {"size": 2}},
        "oldObject": {"metadata": {"annotations":)" +
           std::string(annotations) + R"(}}, "dryRun": false}})";
}

TEST_F(ReviewParserTest, AnAppliedFormIsLeftOutLikeAnyAnnotation) {
    for (const std::string& annotations : {
             R"({"kubectl.kubernetes.io/last-applied-configuration": )" +
                 std::string(applied_form) + "}",
             std::string(R"({"a": "x\ud83d\ude00", "b": [1e3, {"c": null}]})"),
             std::string("{\"caf\xc3\xa9\": \"\xe2\x82\xac\"}"),
             std::string(R"("a string")"),
             std::string(R"({})"),
         }) {
        const std::string body = review_with_annotations(annotations);
        json::value expected;
        ASSERT_EQ(boost_reads_less_annotations(body, expected), "") << body;
        EXPECT_EQ(parsed(body), expected) << body;
        EXPECT_EQ(error, "") << body;
        // The object's and the oldObject's, unless they hold what the check leaves to the
        // tokenizer (an exponent, a surrogate pair), which then reads all from there.
        EXPECT_EQ(parser.checked_values(), annotations.find("1e3") == std::string::npos ? 2u : 0u)
            << body;
    }
}

// An UPDATE of an object applied with kubectl, its metadata's members in kube-apiserver's order:
// the old object has a finalizer between its annotations and its managedFields.
std::string applied_update_with_managed_fields(std::string_view managed_fields) {
    const std::string annotations = R"({"kubectl.kubernetes.io/last-applied-configuration": )" +
                                    std::string(applied_form) + "}";
    return R"({"request": {"uid": "u", "operation": "UPDATE", "object": {"metadata": {"name": "a",
        "labels": {"x": "y"}, "annotations": )" +
           annotations + R"(, "managedFields": )" + std::string(managed_fields) +
           R"(}, "spec": {"size": 2}}, "oldObject": {"metadata": {"name": "a", "annotations": )" +
           annotations + R"(, "finalizers": ["f"], "managedFields": )" +
           std::string(managed_fields) + R"(}}, "dryRun": false}})";
}

TEST_F(ReviewParserTest, TheManagedFieldsAfterAnAppliedFormAreLeftOutUnread) {
    const std::string body = applied_update_with_managed_fields(
        R"([{"manager": "kubectl-client-side-apply", "operation": "Update", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": {"f:annotations": {".": {}}}, "f:spec": {"f:size": {}}}}])");
    json::value expected = json::parse(body);
    for (const std::string_view name : {"object", "oldObject"}) {
        auto& metadata = expected.at("request").at(name).at("metadata").as_object();
        metadata.erase("annotations");
        metadata.erase("managedFields");
    }
    EXPECT_EQ(parsed(body), expected);
    EXPECT_EQ(error, "");
    EXPECT_EQ(parser.checked_values(), 4u);
}

TEST_F(ReviewParserTest, TheManagedFieldsAfterANameFoundElsewhereAreStillLeftOut) {
    // The search finds "annotations" inside the key x"annotations, which the parser reads; the
    // managedFields after it are metadata's own, left out.
    const std::string body =
        R"({"request": {"uid": "u", "object": {"metadata": {"x\"annotations": {"a": "\\"},
            "managedFields": [{"manager": "m", "fieldsV1": {"f:spec": {}}}], "name": "a"}}}})";
    json::value expected = json::parse(body);
    expected.at("request").at("object").at("metadata").as_object().erase("managedFields");
    EXPECT_EQ(parsed(body), expected);
    EXPECT_EQ(error, "");
    EXPECT_EQ(parser.checked_values(), 1u);
}

TEST_F(ReviewParserTest, TheManagedFieldsAfterAnAppliedFormNestedToTheDepthLimit) {
    // managedFields lie four containers deep, as the annotations do; the parser allows 32.
    const auto nested = [](std::size_t containers) {
        return R"({"request": {"object": {"metadata": {"annotations": {"a": "\\"}, "managedFields": )" +
               std::string(containers, '[') + std::string(containers, ']') + "}}}}";
    };
    EXPECT_EQ(parsed(nested(28)), json::parse(R"({"request": {"object": {"metadata": {}}}})"));
    EXPECT_EQ(error, "");
    EXPECT_EQ(parser.checked_values(), 2u);
    parsed(nested(29));
    EXPECT_NE(error, "");
}

TEST_F(ReviewParserTest, TheManagedFieldsAfterAnAppliedFormAreStillCheckedAsJson) {
    for (const std::string_view managed_fields : {
             R"([{"manager": 01}])",
             R"([{"manager": "m",}])",
             "[{\"time\": \"raw\ttab\"}]",
         }) {
        const std::string body = applied_update_with_managed_fields(managed_fields);
        boost::system::error_code ec;
        json::parse(body, ec, {}, options_with_depth(32));
        ASSERT_TRUE(ec) << body;
        parsed(body);
        EXPECT_EQ(error, ec.message()) << body;
    }
}

TEST_F(ReviewParserTest, AnAppliedFormIsStillCheckedAsJson) {
    for (const std::string_view annotations : {
             R"({"a": "\x"})",
             R"({"a": "\ud800"})",
             "{\"a\": \"raw\ttab\"}",
             "{\"a\": \"\xc0\xaf\"}",
             R"({"a": "b",})",
             R"({"a": 01})",
             R"({"a": "unterminated)",
         }) {
        const std::string body = review_with_annotations(annotations);
        json::value expected;
        const std::string expected_error = boost_reads_less_annotations(body, expected);
        ASSERT_NE(expected_error, "") << body;
        parsed(body);
        EXPECT_EQ(error, expected_error) << body;
        EXPECT_EQ(parser.checked_values(), 0u) << body;
    }
    parsed(review_with_annotations(R"({"a": [1e999]})"));
    EXPECT_TRUE(parser.non_finite());
}

TEST_F(ReviewParserTest, AnnotationsAnywhereElseAreKept) {
    for (
        const std::string& body : {
            std::string(
                R"({"request": {"uid": "\\/", "object": {"spec": {"template": {"metadata": {"annotations": {"a": "b"}}}}}}})"),
            std::string(
                R"({"request": {"uid": "\\/", "object": {"metadata": {"labels": {"annotations": "x"}}}}})"),
            std::string(
                R"({"request": {"uid": "\\/", "object": {"metadata": {"name": "\"annotations\": {}"}}}})"),
            std::string(
                R"({"request": {"uid": "\\/", "object": {"metadata": {"x\"annotations": {"a": "b"}}}}})"),
            std::string(R"({"annotations": {"a": "b"}, "request": {"uid": "\\/"}})"),
        }) {
        EXPECT_EQ(parsed(body), json::parse(body)) << body;
        EXPECT_EQ(error, "") << body;
        EXPECT_EQ(parser.checked_values(), 0u) << body;
    }
}

TEST_F(ReviewParserTest, AnnotationsNestedToTheDepthLimit) {
    // The annotations lie four containers deep; the parser allows 32.
    const auto nested = [](std::size_t containers) {
        return R"({"request": {"uid": "\/", "object": {"metadata": {"annotations": )" +
               std::string(containers, '[') + std::string(containers, ']') + "}}}}";
    };
    EXPECT_EQ(parsed(nested(28)),
              json::parse(R"({"request": {"uid": "\/", "object": {"metadata": {}}}})"));
    EXPECT_EQ(error, "");
    EXPECT_EQ(parser.checked_values(), 1u);
    parsed(nested(29));
    EXPECT_NE(error, "");
}

TEST(ReviewParserDepth, AScalarStandsInForAnnotationsAtTheDepthLimit) {
    // A parser that allows no container below metadata: the annotations' string is checked,
    // and what stands in for it needs no more room than it did.
    ReviewParser parser(options_with_depth(4));
    parser.reset(json::storage_ptr());
    boost::system::error_code ec;
    const json::value document = parser.write(
        R"({"request": {"object": {"metadata": {"annotations": "\\", "name": "a"}}}})", ec);
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_EQ(parser.checked_values(), 1u);
    EXPECT_EQ(document, json::parse(R"({"request": {"object": {"metadata": {"name": "a"}}}})"));
}

// With a builder: request.object of a CREATE goes to it, not into the DOM.
class DivertingParserTest : public testing::Test {
  protected:
    json::value parsed(std::string_view body) {
        parser.reset(json::storage_ptr());
        parser.divert_created_object(&builder);
        boost::system::error_code ec;
        json::value document = parser.write(body, ec);
        EXPECT_FALSE(ec) << ec.message();
        return document;
    }

    // The CREATE of an object named "a" with one role "r", in an envelope of a uid and dryRun:
    // the DOM keeps the envelope, the builder the object.
    void expect_envelope_and_model(const json::value& document) {
        EXPECT_TRUE(parser.diverted());
        EXPECT_EQ(document, json::parse(R"({"request": {"uid": "u", "operation": "CREATE",
                                                         "dryRun": false}})"));
        const auto model = builder.finish();
        ASSERT_TRUE(model.has_value());
        EXPECT_EQ(model->name, "a");
        ASSERT_EQ(model->roles.size(), 1u);
        EXPECT_EQ(model->roles[0].name, "r");
    }

    std::pmr::monotonic_buffer_resource memory;
    rules::ModelBuilder builder{&memory};
    ReviewParser parser{options_with_depth(32)};
};

TEST_F(DivertingParserTest, ACreatesObjectGoesToTheBuilder) {
    const json::value document = parsed(R"({"request": {"uid": "u", "operation": "CREATE",
        "object": {"metadata": {"name": "a", "annotations": {"x": "y"}}, "spec": {"roles": [{"name": "r"}]}},
        "dryRun": false}})");
    expect_envelope_and_model(document);
}

TEST_F(DivertingParserTest, TheBuilderMissesNothingOfAnAppliedForm) {
    const json::value document = parsed(R"({"request": {"uid": "u", "operation": "CREATE",
        "object": {"metadata": {"name": "a", "annotations": {"last-applied": "{\"spec\":{}}"},
                                "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}]},
                   "spec": {"roles": [{"name": "r"}]}}, "dryRun": false}})");
    EXPECT_EQ(parser.checked_values(), 2u);
    expect_envelope_and_model(document);
}

TEST_F(DivertingParserTest, WhatTheBuilderDoesNotReadIsLeftOutOfIt) {
    const json::value document = parsed(R"({"request": {"uid": "u", "operation": "CREATE",
        "object": {"metadata": {"name": "a", "annotations": {"x": "y"}, "labels": {"l": "v"}},
                   "spec": {"roles": [{"name": "r", "extraArgs": ["--a", "1"]}]}},
        "dryRun": false}})");
    EXPECT_EQ(parser.checked_values(), 2u);  // the annotations and the labels
    expect_envelope_and_model(document);
}

TEST_F(DivertingParserTest, ABodyLeftToBoostJsonKeepsItsObjectInTheDom) {
    // A fraction anywhere leaves the body to Boost.JSON's tokenizer, and the object to the DOM.
    const json::value document = parsed(R"({"request": {"operation": "CREATE",
        "object": {"metadata": {"name": "a", "annotations": {"x": "y"}}}, "timeout": 1.5}})");
    EXPECT_FALSE(parser.diverted());
    EXPECT_EQ(document, json::parse(R"({"request": {"operation": "CREATE",
        "object": {"metadata": {"name": "a"}}, "timeout": 1.5}})"));
}

TEST(DivertingParserDepth, AnObjectNestedPastTheTokenizersLimitStaysInTheDom) {
    // The tokenizer keeps 64 containers open, counted from the document's root, however deep
    // Boost.JSON may go: a document of 65 is Boost.JSON's to read, and its object the DOM's.
    const std::string body = R"({"request": {"operation": "CREATE", "object": )" +
                             std::string(63, '[') + std::string(63, ']') + "}}";
    ReviewParser parser(options_with_depth(100));
    std::pmr::monotonic_buffer_resource memory;
    rules::ModelBuilder builder(&memory);
    parser.reset(json::storage_ptr());
    parser.divert_created_object(&builder);
    boost::system::error_code ec;
    const json::value document = parser.write(body, ec);
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_FALSE(parser.diverted());
    EXPECT_EQ(document, json::parse(body, {}, options_with_depth(100)));
}

TEST_F(DivertingParserTest, AnyOtherObjectStaysInTheDom) {
    for (
        const std::string body : {
            R"({"request": {"operation": "UPDATE", "object": {"spec": {}}, "oldObject": {"spec": {}}}})",
            R"({"request": {"object": {"spec": {}}, "operation": "CREATE"}})",
            R"({"request": {"operation": "CREATE", "oldObject": {"spec": {}}}})",
            R"({"operation": "CREATE", "object": {"spec": {}}})",
        }) {
        EXPECT_EQ(parsed(body), json::parse(body)) << body;
        EXPECT_FALSE(parser.diverted()) << body;
    }
}

TEST_F(DivertingParserTest, AnOperationIsTheTextItsEscapesSpell) {
    // The caller reads the operation from the DOM, decoded: a CREATE however it is written.
    const json::value document =
        parsed(R"({"request": {"operation": "CR\u0045ATE", "object": {"spec": {}}}})");
    EXPECT_TRUE(parser.diverted());
    EXPECT_EQ(document, json::parse(R"({"request": {"operation": "CREATE"}})"));
}

TEST_F(DivertingParserTest, OnlyTheFirstObjectGoes) {
    // A DOM keeps the last of duplicated members: the caller reads such a review again.
    const json::value document = parsed(R"({"request": {"operation": "CREATE",
        "object": {"spec": {}}, "object": {"metadata": {"name": "second"}}}})");
    EXPECT_TRUE(parser.diverted());
    EXPECT_EQ(document, json::parse(R"({"request": {"operation": "CREATE",
                                                     "object": {"metadata": {"name": "second"}}}})"));
}

TEST_F(DivertingParserTest, WhatTheBuilderDoesNotReadIsStillCheckedAsJson) {
    parser.reset(json::storage_ptr());
    parser.divert_created_object(&builder);
    boost::system::error_code ec;
    parser.write(R"({"request": {"operation": "CREATE", "object": {"status": {"a": [1e999]},
                    "spec": {}}}})",
                 ec);
    EXPECT_TRUE(ec);
    EXPECT_TRUE(parser.non_finite());
}

}  // namespace
}  // namespace mdadmit::test
