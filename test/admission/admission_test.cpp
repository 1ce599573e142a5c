// The AdmissionReview contract with kube-apiserver: reviews in, answers out, no sockets.
#include "mdadmit/admission/admission.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace mdadmit::test {
namespace {

namespace json = boost::json;
using admission::AdmissionPath;
using admission::Clock;
using admission::Lookup;
using admission::Outcome;

const json::value denied_object =
    json::parse(R"({"apiVersion": "worker.gpustack.ai/v1", "kind": "ModelDeployment",
    "metadata": {"name": "mm", "namespace": "ns"},
    "spec": {"model": {"name": "m"}, "engine": {"name": "vLLM", "version": "0.29.0"},
             "router": {"name": "vllm-router", "extraArgs": ["--policy", "round-robin", "--host", "x"]},
             "roles": [{"name": "a"}]}})");

const json::value warned_object = json::parse(R"({"metadata": {"name": "dp"},
    "spec": {"model": {"name": "m"}, "engine": {"name": "vLLM", "version": "0.29.0"}, "router": {"name": "llm-d-router"},
             "roles": [{"name": "s", "extraArgs": ["-dpe"]}]}})");

std::string review(const json::value& object, std::string_view api_version = "admission.k8s.io/v1",
                   std::string_view operation = "CREATE", std::string_view kind = "ModelDeployment",
                   bool dry_run = false) {
    return json::serialize(json::object{
        {"apiVersion", api_version},
        {"kind", "AdmissionReview"},
        {"request",
         json::object{{"uid", "uid-1"},
                      {"kind", json::object{{"group", kind == "Pod" ? "" : "worker.gpustack.ai"},
                                            {"version", "v1"},
                                            {"kind", kind}}},
                      {"operation", operation},
                      {"namespace", "ns"},
                      {"userInfo", json::object{{"username", "alice"}}},
                      {"dryRun", dry_run},
                      {"object", object}}}});
}

// A review answered in one step (everything but a Pod on /mutate).
Outcome answered(const admission::Admission& admission, AdmissionPath path, const std::string& body,
                 Clock::time_point deadline) {
    auto step = admission.admit(path, body, nullptr, deadline);
    EXPECT_TRUE(std::holds_alternative<Outcome>(step));
    return std::get<Outcome>(std::move(step));
}

class AdmissionTest : public testing::Test {
  protected:
    Outcome handle(const std::string& body, AdmissionPath path = AdmissionPath::validate,
                   Clock::time_point deadline = Clock::now() + std::chrono::seconds(10)) {
        return answered(admission, path, body, deadline);
    }
    static json::value response_of(const Outcome& outcome) { return json::parse(outcome.body); }

    rules::Engine engine = rules::Engine::with_embedded_data();
    admission::Admission admission{engine};
};

TEST_F(AdmissionTest, ADenialListsEveryDenyFindingAsFieldMessageRule) {
    const auto outcome = handle(review(denied_object));
    EXPECT_EQ(outcome.http_status, 200);
    EXPECT_EQ(outcome.verdict, "denied");
    const json::value body = response_of(outcome);
    EXPECT_EQ(body.at("apiVersion"), "admission.k8s.io/v1");
    EXPECT_EQ(body.at("kind"), "AdmissionReview");
    const auto& response = body.at("response");
    EXPECT_EQ(response.at("uid"), "uid-1");
    EXPECT_EQ(response.at("allowed"), false);
    EXPECT_FALSE(response.as_object().contains("patch"));
    EXPECT_FALSE(response.as_object().contains("patchType"));
    const auto& status = response.at("status");
    EXPECT_EQ(status.at("code"), 422);
    EXPECT_EQ(status.at("reason"), "Invalid");
    EXPECT_EQ(status.at("message"),
              "spec.router.extraArgs[1]: unknown policy `round-robin` for vllm-router; did you "
              "mean `round_robin`? "
              "[router-policy-value]; spec.router.extraArgs[2]: `--host` is set by the operator "
              "for vllm-router "
              "[router-flag-owned]");
    const auto& details = status.at("details");
    EXPECT_EQ(details.at("name"), "mm");
    EXPECT_EQ(details.at("group"), "worker.gpustack.ai");
    EXPECT_EQ(details.at("kind"), "ModelDeployment");
    ASSERT_EQ(details.at("causes").as_array().size(), 2u);
    EXPECT_EQ(details.at("causes").at(1),
              json::parse(R"({"reason": "FieldValueInvalid", "field": "spec.router.extraArgs[2]",
                              "message": "`--host` is set by the operator for vllm-router [router-flag-owned]"})"));
    std::vector<std::string_view> rule_ids;
    for (const auto& finding : outcome.counts.findings) {
        rule_ids.push_back(finding.rule);
    }
    EXPECT_EQ(rule_ids,
              (std::vector<std::string_view>{"router-policy-value", "router-flag-owned"}));
    EXPECT_EQ(outcome.user, "alice");
    EXPECT_EQ(outcome.name, "mm");
    // What the server counts: every finding with its severity.
    ASSERT_EQ(outcome.counts.findings.size(), 2u);
    EXPECT_EQ(outcome.counts.findings[0],
              (admission::CountedFinding{"router-policy-value", rules::Severity::deny, true}));
}

TEST_F(AdmissionTest, WarningsArePrefixedWithTheRuleAndTheAnswerIsAllowed) {
    const auto outcome = handle(review(warned_object, "admission.k8s.io/v1beta1"));
    const json::value body = response_of(outcome);
    EXPECT_EQ(body.at("apiVersion"), "admission.k8s.io/v1beta1");
    EXPECT_EQ(body.at("response").at("allowed"), true);
    EXPECT_FALSE(body.at("response").as_object().contains("status"));
    EXPECT_EQ(
        body.at("response").at("warnings"),
        json::parse(R"(["external-dp-router: spec.router.name: External DP role `s`: llm-d-router )"
                    R"(spreads ranks unevenly; use vllm-router"])"));
}

// Staged enforcement: the refusal becomes warnings that say it would have denied, and the
// server counts them as not enforced.
TEST(StagedEnforcement, StarWarnAdmitsWithWouldDenyWarnings) {
    auto enforcement = rules::parse_enforcement("*=warn");
    ASSERT_TRUE(enforcement.ok());
    const auto engine = rules::Engine::with_embedded_data(
        {rules::StructureCheck::decoder_only, std::move(enforcement).value()});
    const admission::Admission admission(engine);
    const auto outcome = answered(admission, AdmissionPath::validate, review(denied_object),
                                  Clock::now() + std::chrono::seconds(10));
    const json::value body = json::parse(outcome.body);
    EXPECT_EQ(body.at("response").at("allowed"), true);
    EXPECT_EQ(outcome.verdict, "allowed");
    EXPECT_EQ(
        body.at("response").at("warnings"),
        json::parse(R"(["router-policy-value (would deny): spec.router.extraArgs[1]: unknown )"
                    R"(policy `round-robin` for vllm-router; did you mean `round_robin`?",)"
                    R"("router-flag-owned (would deny): spec.router.extraArgs[2]: `--host` )"
                    R"(is set by the operator for vllm-router"])"));
    ASSERT_EQ(outcome.counts.findings.size(), 2u);
    EXPECT_EQ(outcome.counts.findings[0],
              (admission::CountedFinding{"router-policy-value", rules::Severity::warn, false}));
}

TEST_F(AdmissionTest, DryRunGetsTheSameVerdict) {
    const auto outcome =
        handle(review(denied_object, "admission.k8s.io/v1", "CREATE", "ModelDeployment", true));
    EXPECT_TRUE(outcome.dry_run);
    EXPECT_EQ(response_of(outcome).at("response").at("allowed"), false);
}

TEST_F(AdmissionTest, DeleteConnectAndUnjudgedKindsAreAllowed) {
    for (const char* operation : {"DELETE", "CONNECT"}) {
        EXPECT_EQ(response_of(handle(review(denied_object, "admission.k8s.io/v1", operation)))
                      .at("response")
                      .at("allowed"),
                  true)
            << operation;
    }
    const auto pod = handle(review(denied_object, "admission.k8s.io/v1", "CREATE", "Pod"));
    EXPECT_EQ(response_of(pod).at("response").at("allowed"), true);
    EXPECT_EQ(pod.counts.unjudged_kind, "/Pod");
}

TEST_F(AdmissionTest, NumbersBeyondADoubleAreABadRequest) {
    const auto outcome = handle(
        R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","object":{"spec":{"roles":[{"replicas":0E400}]}}}})");
    EXPECT_EQ(outcome.http_status, 400);
    EXPECT_NE(
        outcome.body.find("request body is not valid JSON: a number beyond the range of a double"),
        std::string::npos)
        << outcome.body;
}

// What kubectl and the apiserver add to an object's metadata, ahead of its other members.
json::value with_applied_metadata(json::value object) {
    json::object& metadata = object.at("metadata").as_object();
    json::object applied{
        {"annotations",
         {{"kubectl.kubernetes.io/last-applied-configuration", json::serialize(object)}}},
        {"managedFields",
         json::array{{{"manager", "kubectl"}, {"fieldsV1", {{"f:spec", json::object()}}}}}}};
    for (const auto& [key, value] : metadata) {
        applied[key] = value;
    }
    metadata = std::move(applied);
    return object;
}

TEST_F(AdmissionTest, TheObjectsAnnotationsAndManagedFieldsChangeNoAnswer) {
    for (const json::value& object : {denied_object, warned_object}) {
        const Outcome plain = handle(review(object));
        const Outcome applied = handle(review(with_applied_metadata(object)));
        EXPECT_EQ(applied.body, plain.body);
        EXPECT_EQ(applied.name, object.at("metadata").at("name").as_string());
    }
}

TEST_F(AdmissionTest, WhatIsCountedComesFromClosedSetsWhateverTheRequestSays) {
    const auto odd = handle(review(denied_object, "admission.k8s.io/v1", "Create\"}", "Widget"));
    EXPECT_EQ(odd.operation, "Create\"}");  // the decision log keeps what was sent
    EXPECT_EQ(odd.counts.operation, "other");
    EXPECT_EQ(odd.counts.unjudged_kind, "other");
    const auto types =
        handle(review(denied_object, "admission.k8s.io/v1", "UPDATE", "InstanceType"));
    EXPECT_EQ(types.counts.operation, "UPDATE");
    EXPECT_EQ(types.counts.unjudged_kind, "worker.gpustack.ai/InstanceType");
    const auto judged = handle(review(denied_object, "admission.k8s.io/v1", "DELETE"));
    EXPECT_EQ(judged.counts.operation, "DELETE");
    EXPECT_EQ(judged.counts.unjudged_kind, "");
}

TEST_F(AdmissionTest, MutateAllowsOtherKindsWithoutAPatch) {
    const auto outcome = handle(review(denied_object), AdmissionPath::mutate);
    const json::value response = response_of(outcome).at("response");
    EXPECT_EQ(response.at("allowed"), true);
    EXPECT_FALSE(response.as_object().contains("patch"));
}

std::string pod_review(std::string_view role, int member) {
    const json::value pod = json::parse(R"({"metadata": {"namespace": "ns", "labels": {
        "app.kubernetes.io/name": "model-deployment", "app.kubernetes.io/instance": "chat",
        "app.kubernetes.io/component": ")" +
                                        std::string(role) + R"(",
        "modeldeployment.gpustack.ai/member-index": ")" +
                                        std::to_string(member) + R"("}},
        "spec": {"containers": [{"name": "engine", "args": ["serve"]}]}})");
    return json::serialize(json::object{
        {"apiVersion", "admission.k8s.io/v1"},
        {"kind", "AdmissionReview"},
        {"request",
         json::object{{"uid", "pod-1"},
                      {"kind", json::object{{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
                      {"operation", "CREATE"},
                      {"namespace", "ns"},
                      {"object", pod}}}});
}

std::string decoded_patch(const json::value& response) {
    static constexpr std::string_view alphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const std::string encoded(response.at("patch").as_string());
    std::string out;
    unsigned buffer = 0;
    int bits = 0;
    for (const char c : encoded) {
        if (c == '=') {
            break;
        }
        buffer = buffer << 6 | static_cast<unsigned>(alphabet.find(c));
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>(buffer >> bits & 0xff);
        }
    }
    return out;
}

const auto chat = std::make_shared<const json::value>(json::parse(R"({"kind": "ModelDeployment",
    "metadata": {"name": "chat", "namespace": "ns"},
    "spec": {"model": {"name": "m"}, "engine": {"name": "SGLang"}, "router": {"name": "sglang-gateway"},
             "roles": [{"name": "enc", "kind": "Encode"}, {"name": "prefill", "kind": "Prefill", "size": 2},
                       {"name": "decode", "kind": "Decode"}]}})"));

// A Pod on /mutate: admitted in two steps, with `lookup` answering for its ModelDeployment.
class MutationTest : public testing::Test {
  protected:
    Outcome mutate(const std::string& body, bool deny_when_unreadable = false) {
        const admission::Admission admission(engine, {{}, deny_when_unreadable});
        auto step = admission.admit(AdmissionPath::mutate, body, nullptr,
                                    Clock::now() + std::chrono::seconds(10));
        auto* pending = std::get_if<admission::PendingPod>(&step);
        if (pending == nullptr) {
            ADD_FAILURE() << "a Pod on /mutate waits for its ModelDeployment";
            return std::get<Outcome>(std::move(step));
        }
        asked.push_back(pending->namespace_name + "/" + pending->deployment);
        const Lookup lookup = pending->deployment == "chat"
                                  ? Lookup{Lookup::Status::found, chat, {}}
                                  : Lookup{Lookup::Status::not_found, {}, {}};
        return admission.complete(std::move(*pending), lookup, nullptr);
    }

    rules::Engine engine = rules::Engine::with_embedded_data();
    std::vector<std::string> asked;
};

TEST_F(MutationTest, AnEnginePodGetsItsLabelAndFlagsAsABase64JsonPatch) {
    const Outcome outcome = mutate(pod_review("prefill", 0));
    const json::value response = json::parse(outcome.body).at("response");
    EXPECT_EQ(asked, std::vector<std::string>{"ns/chat"});
    EXPECT_EQ(outcome.counts.lookup, Lookup::Status::found);
    EXPECT_EQ(response.at("uid"), "pod-1");
    EXPECT_EQ(response.at("allowed"), true);
    EXPECT_EQ(response.at("patchType"), "JSONPatch");
    EXPECT_EQ(json::parse(decoded_patch(response)), json::parse(R"([
        {"op": "add", "path": "/metadata/labels/modeldeployment.gpustack.ai~1router-candidate", "value": "true"},
        {"op": "add", "path": "/spec/containers/0/args/-", "value": "--encoder-urls"},
        {"op": "add", "path": "/spec/containers/0/args/-", "value": "http://chat-enc.ns.svc:8000"}])"));
}

TEST_F(MutationTest, APendingPodOutlivesTheReviewsAdmittedWhileItWaits) {
    const admission::Admission admission(engine);
    auto step = admission.admit(AdmissionPath::mutate, pod_review("prefill", 0), nullptr,
                                Clock::now() + std::chrono::seconds(10));
    ASSERT_TRUE(std::holds_alternative<admission::PendingPod>(step));
    // Other reviews are admitted on the same thread while the lookup is in flight.
    for (int i = 0; i < 3; ++i) {
        answered(admission, AdmissionPath::validate, review(denied_object),
                 Clock::now() + std::chrono::seconds(10));
    }
    const Outcome outcome = admission.complete(std::get<admission::PendingPod>(std::move(step)),
                                               {Lookup::Status::found, chat, {}}, nullptr);
    EXPECT_EQ(
        json::parse(decoded_patch(json::parse(outcome.body).at("response"))).as_array().size(), 3u);
}

TEST_F(MutationTest, APodsAnnotationsAndManagedFieldsChangeNoPatch) {
    json::value body = json::parse(pod_review("prefill", 0));
    json::value& pod = body.at("request").at("object");
    pod = with_applied_metadata(pod);
    EXPECT_EQ(mutate(json::serialize(body)).body, mutate(pod_review("prefill", 0)).body);
}

TEST_F(MutationTest, NothingToChangeMeansNoPatch) {
    const json::value response = json::parse(mutate(pod_review("enc", 0)).body).at("response");
    EXPECT_EQ(response.at("allowed"), true);
    EXPECT_FALSE(response.as_object().contains("patch"));
    EXPECT_FALSE(response.as_object().contains("patchType"));
}

TEST_F(MutationTest, AnUnreadableModelDeploymentFollowsTheFailureMode) {
    std::string other = pod_review("prefill", 0);
    other.replace(other.find("\"chat\""), 6, "\"gone\"");
    const Outcome unchanged = mutate(other);
    EXPECT_EQ(unchanged.counts.lookup, Lookup::Status::not_found);
    const json::value admitted = json::parse(unchanged.body).at("response");
    EXPECT_EQ(admitted.at("allowed"), true);
    EXPECT_EQ(
        admitted.at("warnings"),
        json::parse(R"(["mdadmit: ModelDeployment ns/gone not found; Pod admitted unchanged"])"));
    const json::value denied = json::parse(mutate(other, true).body).at("response");
    EXPECT_EQ(denied.at("allowed"), false);
    EXPECT_EQ(denied.at("status").at("code"), 503);
}

TEST_F(AdmissionTest, MalformedReviewsAreHttp400WithAStatusBody) {
    const std::vector<std::pair<std::string, std::string>> cases{
        {"{not json", "request body is not valid JSON: syntax error"},
        {"[]", "expected an AdmissionReview of admission.k8s.io/v1 or v1beta1"},
        {R"({"apiVersion": "admission.k8s.io/v2", "kind": "AdmissionReview", "request": {"uid": "u"}})",
         "expected an AdmissionReview of admission.k8s.io/v1 or v1beta1"},
        {R"({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"})",
         "the AdmissionReview has no request"},
        {R"({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": ""}})",
         "request.uid is missing"},
    };
    for (const auto& [body, message] : cases) {
        const auto outcome = handle(body);
        EXPECT_EQ(outcome.http_status, 400) << body;
        const json::value status = json::parse(outcome.body);
        EXPECT_EQ(status.at("kind"), "Status");
        EXPECT_EQ(status.at("code"), 400);
        EXPECT_EQ(status.at("message").as_string(), message) << body;
    }
}

// A connection hands each outcome back as the next answer's memory: nothing of the earlier
// answer may show in the next, whatever either one was.
TEST_F(AdmissionTest, AnOutcomeHandedBackAsMemoryAnswersAsAFreshOneWould) {
    const std::string anonymous =
        R"({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": "u-2", "kind": {"group": "worker.gpustack.ai", "kind": "ModelDeployment"},
                    "operation": "CREATE", "object": {"spec": {}}}})";
    const std::vector<std::string> bodies{
        review(denied_object, "admission.k8s.io/v1", "CREATE", "ModelDeployment", true),
        review(warned_object, "admission.k8s.io/v1beta1"),
        anonymous,
        review(denied_object, "admission.k8s.io/v1", "DELETE"),
        "{not json",
        review(json::object{}, "admission.k8s.io/v1", "CREATE", "InstanceType"),
        anonymous,
        review(denied_object),
    };
    Outcome storage;
    for (const auto& body : bodies) {
        const Outcome fresh = handle(body);
        auto step = admission.admit(AdmissionPath::validate, body, nullptr,
                                    Clock::now() + std::chrono::seconds(10), std::move(storage));
        ASSERT_TRUE(std::holds_alternative<Outcome>(step));
        storage = std::get<Outcome>(std::move(step));
        EXPECT_EQ(storage, fresh) << body;
        EXPECT_EQ(storage.body, fresh.body) << body;
    }
}

// A body up to 64 KiB is read by its thread's kept parser, a larger one by a parser of its own:
// each body is read whole and on its own, whatever was read before it, a failed read included.
TEST_F(AdmissionTest, EachBodyIsReadOnItsOwnWhateverWasReadBeforeIt) {
    json::value large_object = denied_object;
    large_object.at("metadata").as_object()["annotations"] =
        json::object{{"note", std::string(70 * 1024, 'a')}};
    const std::string large = review(large_object);
    const std::string small = review(warned_object);
    ASSERT_GT(large.size(), 64U * 1024);
    ASSERT_LT(small.size(), 64U * 1024);
    const std::string cut_large = large.substr(0, large.size() - 10);
    const std::string cut_small = small.substr(0, small.size() / 2);
    for (const auto* body : {&small, &cut_large, &small, &large, &cut_small, &large, &small}) {
        const Outcome outcome = handle(*body);
        if (body == &cut_large || body == &cut_small) {
            EXPECT_EQ(outcome.http_status, 400);
            EXPECT_EQ(json::parse(outcome.body).at("message"),
                      "request body is not valid JSON: incomplete JSON");
            continue;
        }
        ASSERT_EQ(outcome.http_status, 200) << outcome.body;
        const json::value response = response_of(outcome).at("response");
        EXPECT_EQ(response.at("uid"), "uid-1");
        EXPECT_EQ(response.at("allowed"), body == &small);
        EXPECT_EQ(outcome.verdict, body == &small ? "allowed" : "denied");
    }
}

// A request's fields can be as long as its body: memory grown for one is not kept for the next
// answer, where an idle connection would hold it.
TEST_F(AdmissionTest, OversizedMemoryIsNotKeptForTheNextAnswer) {
    Outcome storage;
    storage.user.reserve(1024 * 1024);
    storage.body.reserve(1024 * 1024);
    storage.counts.findings.reserve(100'000);
    auto step = admission.admit(AdmissionPath::validate, review(warned_object), nullptr,
                                Clock::now() + std::chrono::seconds(10), std::move(storage));
    const Outcome& outcome = std::get<Outcome>(step);
    EXPECT_EQ(outcome.user, "alice");
    EXPECT_LT(outcome.user.capacity(), 1024u * 1024u);
    EXPECT_LT(outcome.body.capacity(), 1024u * 1024u);
    EXPECT_LT(outcome.counts.findings.capacity(), 100'000u);
    EXPECT_EQ(outcome.counts.findings.size(), 1u);
}

TEST_F(AdmissionTest, APassedDeadlineIsAnsweredWithoutJudging) {
    const auto outcome = handle(review(denied_object), AdmissionPath::validate,
                                Clock::now() - std::chrono::seconds(1));
    const json::value response = response_of(outcome).at("response");
    EXPECT_EQ(response.at("allowed"), false);
    EXPECT_EQ(response.at("status").at("code"), 504);
    EXPECT_TRUE(outcome.counts.findings.empty());
}

TEST(AdmissionPanic, AnExceptionWhileJudgingIsADenialWithCode500AndCounted) {
    const rules::RuleData data = rules::embedded_rule_data();
    const admission::Admission admission(
        [](const rules::Review&) -> rules::Evaluation { throw std::runtime_error("boom"); }, data);
    const auto outcome = answered(admission, AdmissionPath::validate, review(denied_object),
                                  Clock::now() + std::chrono::seconds(5));
    EXPECT_EQ(outcome.http_status, 200);
    EXPECT_EQ(outcome.verdict, "error");
    const json::value response = json::parse(outcome.body).at("response");
    EXPECT_EQ(response.at("uid"), "uid-1");
    EXPECT_EQ(response.at("allowed"), false);
    EXPECT_EQ(response.at("status").at("code"), 500);
    EXPECT_EQ(response.at("status").at("message"), "internal error while judging: boom");
    EXPECT_TRUE(outcome.counts.panic);
}

}  // namespace
}  // namespace mdadmit::test

namespace mdadmit::test {
namespace {

// The answers are written as text directly; what they say is checked against the same answer
// built as a Boost.JSON document and serialized, byte for byte, including escapes.
TEST(AnswerText, IsWhatBoostJsonWouldSerializeEscapesIncluded) {
    const std::string tricky = "a \"quoted\" \\ path\n\ttab \x01\x1f\x7f caf\xc3\xa9 /slash";
    const admission::ReviewEnvelope envelope{"admission.k8s.io/v1beta1", "uid-\"1\""};
    rules::Evaluation evaluation;
    evaluation.findings.push_back({"rule-a", rules::Severity::deny, "spec.x", tricky, "", true});
    evaluation.findings.push_back({"rule-b", rules::Severity::warn, "", "w\x02", "", true});
    evaluation.findings.push_back({"rule-c", rules::Severity::deny, "", "second", "", true});

    const auto head = [&](bool allowed) {
        return json::object{{"uid", envelope.uid}, {"allowed", allowed}};
    };
    const auto whole = [&](json::object response) {
        return json::serialize(json::object{{"apiVersion", envelope.api_version},
                                            {"kind", "AdmissionReview"},
                                            {"response", std::move(response)}});
    };
    const std::string first_text = tricky + " [rule-a]";
    json::object denied = head(false);
    denied["status"] = json::object{
        {"metadata", json::object{}},
        {"status", "Failure"},
        {"code", 422},
        {"reason", "Invalid"},
        {"message",
         "spec.x: a \"quoted\" \\ path  tab     caf\xc3\xa9 /slash [rule-a]; "
         "(object): second [rule-c]"},
        {"details",
         json::object{{"name", "n\"ame"},
                      {"group", "worker.gpustack.ai"},
                      {"kind", "ModelDeployment"},
                      {"causes", json::array{json::object{{"reason", "FieldValueInvalid"},
                                                          {"field", "spec.x"},
                                                          {"message", first_text}},
                                             json::object{{"reason", "FieldValueInvalid"},
                                                          {"field", "(object)"},
                                                          {"message", "second [rule-c]"}}}}}}};
    denied["warnings"] = json::array{"rule-b: (object): w "};
    EXPECT_EQ(admission::verdict_review(
                  envelope, {"n\"ame", "worker.gpustack.ai", "ModelDeployment"}, evaluation),
              whole(denied));

    json::object allowed = head(true);
    allowed["warnings"] = json::array{"one", "t\"wo"};
    EXPECT_EQ(admission::allowed_review(envelope, {"one", "t\"wo"}), whole(allowed));
    EXPECT_EQ(admission::allowed_review(envelope), whole(head(true)));

    json::object patched = head(true);
    patched["patchType"] = "JSONPatch";
    patched["patch"] = "W10=";
    EXPECT_EQ(admission::patch_review(envelope, "[]"), whole(patched));

    json::object failed = head(false);
    failed["status"] = json::object{{"metadata", json::object{}},
                                    {"status", "Failure"},
                                    {"code", 504},
                                    {"reason", "Timeout"},
                                    {"message", "late  \"x\""}};
    EXPECT_EQ(admission::failed_review(envelope, 504, "Timeout", "late\n \"x\""), whole(failed));

    EXPECT_EQ(admission::status_body(413, "RequestEntityTooLarge", "too \\ big"),
              json::serialize(json::object{{"apiVersion", "v1"},
                                           {"kind", "Status"},
                                           {"metadata", json::object{}},
                                           {"status", "Failure"},
                                           {"code", 413},
                                           {"reason", "RequestEntityTooLarge"},
                                           {"message", "too \\ big"}}));
}

TEST(AnswerText, EscapesAnyByteWhereverItFallsInALongText) {
    // Texts are passed sixteen plain bytes at a time: the byte that needs an escape (or none,
    // beyond ASCII) falls at every place of the first sixteen and past them.
    const admission::ReviewEnvelope envelope{"admission.k8s.io/v1", "uid"};
    std::vector<std::string> warnings;
    for (std::size_t place = 0; place <= 40; ++place) {
        for (const std::string_view special : {"\"", "\\", "\n", "\x01", "\x7f", "\xc3\xa9"}) {
            warnings.push_back(std::string(place, 'x') + std::string(special) +
                               std::string(20, 'y'));
        }
    }
    const json::object expected{
        {"apiVersion", envelope.api_version},
        {"kind", "AdmissionReview"},
        {"response", json::object{{"uid", envelope.uid},
                                  {"allowed", true},
                                  {"warnings", json::array(warnings.begin(), warnings.end())}}}};
    EXPECT_EQ(admission::allowed_review(envelope, warnings), json::serialize(expected));
}

}  // namespace
}  // namespace mdadmit::test

namespace mdadmit::test {
namespace {

// Under the decoder-only check a ModelDeployment's CREATE is judged from a model built as the
// review is parsed; the same engine judging the object's DOM must give the same answer to every
// review, whether the object builds or is read again as a DOM.
class BuiltModelTest : public testing::Test {
  protected:
    void expect_same_answer(const std::string& body, std::string_view what) {
        const auto far = Clock::now() + std::chrono::hours(1);
        const Outcome built = answered(from_events, AdmissionPath::validate, body, far);
        const Outcome read = answered(from_dom, AdmissionPath::validate, body, far);
        EXPECT_EQ(built.http_status, read.http_status) << what;
        EXPECT_EQ(built.verdict, read.verdict) << what;
        EXPECT_EQ(built.name, read.name) << what;
        EXPECT_EQ(built.operation, read.operation) << what;
        EXPECT_EQ(built.counts.findings.size(), read.counts.findings.size()) << what;
        EXPECT_EQ(built.body, read.body) << what;
    }

    const rules::Engine engine = rules::Engine::with_embedded_data(
        {rules::StructureCheck::decoder_only, rules::Enforcement{}});
    const admission::Admission from_events{engine};
    const admission::Admission from_dom{
        [this](const rules::Review& review) { return engine.evaluate(review); }, engine.data()};
};

TEST_F(BuiltModelTest, ACreateIsAnsweredAsFromTheObjectsDom) {
    expect_same_answer(review(denied_object), "denied");
    expect_same_answer(review(warned_object), "warned");
    expect_same_answer(review(denied_object, "admission.k8s.io/v1beta1"), "v1beta1");
    const json::value unnamed =
        json::parse(R"({"metadata": {"name": "from-object"}, "spec": {"roles": [{"name": "a"}]}})");
    const Outcome outcome = answered(from_events, AdmissionPath::validate, review(unnamed),
                                     Clock::now() + std::chrono::hours(1));
    EXPECT_EQ(outcome.name, "from-object");  // the request names none: the object's name
    expect_same_answer(review(unnamed), "named by the object");
}

TEST_F(BuiltModelTest, AnObjectTheBuilderLeavesIsReadAsADom) {
    // Wrong types, unknown names, null and no object: the decoder's findings, from a DOM.
    for (const std::string_view object : {
             R"({"metadata": {"name": "m"}, "spec": {"roles": [{"name": "a", "replicas": "2"}]}})",
             R"({"metadata": {"name": "m"}, "spec": {"engine": {"name": "TGI"}, "roles": []}})",
             R"({"metadata": {"name": "m"}})",
             R"(null)",
             R"([1, 2])",
         }) {
        expect_same_answer(review(json::parse(object)), object);
    }
}

TEST_F(BuiltModelTest, AReviewWhoseEnvelopeSaysOtherwiseIsReadAsADom) {
    const std::string object = json::serialize(denied_object);
    for (const std::string& body : {
             // The operation after the object: not diverted.
             R"({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
                 "uid": "u", "kind": {"group": "worker.gpustack.ai", "version": "v1",
                 "kind": "ModelDeployment"}, "object": )" +
                 object + R"(, "operation": "CREATE"}})",
             // A second operation, after the object, says UPDATE; a DOM keeps the last.
             R"({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
                 "uid": "u", "kind": {"group": "worker.gpustack.ai", "version": "v1",
                 "kind": "ModelDeployment"}, "operation": "CREATE", "object": )" +
                 object + R"(, "operation": "UPDATE", "oldObject": )" + object + "}}",
             // A second object: a DOM keeps the last.
             R"({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
                 "uid": "u", "kind": {"group": "worker.gpustack.ai", "version": "v1",
                 "kind": "ModelDeployment"}, "operation": "CREATE", "object": )" +
                 object + R"(, "object": )" + json::serialize(warned_object) + "}}",
             // An operation with an escape.
             R"({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
                 "uid": "u", "kind": {"group": "worker.gpustack.ai", "version": "v1",
                 "kind": "ModelDeployment"}, "operation": "CR\u0045ATE", "object": )" +
                 object + "}}",
         }) {
        expect_same_answer(body, body);
    }
    expect_same_answer(review(denied_object, "admission.k8s.io/v1", "UPDATE"), "UPDATE");
    expect_same_answer(review(denied_object, "admission.k8s.io/v1", "CREATE", "InstanceType"),
                       "another kind");
}

TEST_F(BuiltModelTest, KeysAndTextsInPartsAreReadWhole) {
    // Escapes, and texts longer than the tokenizer's buffer for escaped text, before and after
    // their escape: the tokenizer gives these in parts.
    const std::string escaped_last = "--served-model-name=" + std::string(5000, 'q') + "\\u0041";
    const std::string escaped_first = "\\u0041" + std::string(5000, 'q');
    const std::string object =
        R"({"metadata": {"n\u0061me": "m\u0031", "namespace": "ns"},
            "spec": {"model": {"name": "m"}, "engine": {"name": "vLLM", "version": "0.29.0"},
                     "router": {"name": "vllm-router"},
                     "roles": [{"name": "a", "extr\u0061Args": ["--h\u006fst", "x", ")" +
        escaped_last + R"(", ")" + escaped_first + R"("]}]}})";
    const std::string body =
        R"({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
            "uid": "u", "kind": {"group": "worker.gpustack.ai", "version": "v1",
            "kind": "ModelDeployment"}, "operation": "CREATE", "object": )" +
        object + "}}";
    expect_same_answer(body, "escapes");
    const Outcome outcome =
        answered(from_events, AdmissionPath::validate, body, Clock::now() + std::chrono::hours(1));
    EXPECT_EQ(outcome.name, "m1");
}

}  // namespace
}  // namespace mdadmit::test
