// AdmissionReview bytes into the admission library, on both paths: any input gets an answer
// (an AdmissionReview or an HTTP error), never a crash, and the same answer twice. The review's
// tokenizer makes Boost.JSON's calls for what it takes, the review parser reads what Boost.JSON's
// own parser reads, less the members it leaves out, and the check that stands in for Boost.JSON
// on left-out values takes nothing Boost.JSON refuses.
#include <boost/json.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <variant>

#include "check.hpp"
#include "document_tokenizer.hpp"
#include "json_call_recorder.hpp"
#include "left_out_values.hpp"
#include "mdadmit/admission/admission.hpp"
#include "mdadmit/rules/engine.hpp"
#include "mdadmit/rules/json_input.hpp"
#include "mdadmit/rules/limits.hpp"
#include "review_parser.hpp"

namespace {

using namespace mdadmit;

const rules::Engine& engine() {
    static const rules::Engine instance = rules::Engine::with_embedded_data();
    return instance;
}

// A ModelDeployment every Pod's lookup finds: a vLLM Server role with two-member replicas.
admission::Lookup found() {
    static const auto object = std::make_shared<const boost::json::value>(boost::json::parse(R"({
        "apiVersion": "worker.gpustack.ai/v1", "kind": "ModelDeployment",
        "metadata": {"name": "chat", "namespace": "ns"},
        "spec": {"model": {"name": "m"}, "engine": {"name": "vLLM", "version": "0.11.0"},
                 "router": {"name": "vllm-router"},
                 "roles": [{"name": "serve", "replicas": 2, "size": 2,
                            "extraArgs": ["--data-parallel-size", "2"]}]}})"));
    return {admission::Lookup::Status::found, object, {}};
}

std::string answer(const admission::Admission& admission, admission::AdmissionPath path,
                   std::string_view body, bool lookup_found) {
    const auto far = admission::Clock::now() + std::chrono::hours(1);
    auto result = admission.admit(path, body, nullptr, far);
    if (auto* pending = std::get_if<admission::PendingPod>(&result)) {
        const admission::Lookup lookup =
            lookup_found ? found()
                         : admission::Lookup{admission::Lookup::Status::not_found, {}, {}};
        const admission::Outcome outcome = admission.complete(std::move(*pending), lookup, nullptr);
        FUZZ_CHECK(outcome.http_status == 200, "a completed Pod answers 200, got %d",
                   outcome.http_status);
        return outcome.body;
    }
    const auto& outcome = std::get<admission::Outcome>(result);
    FUZZ_CHECK(outcome.http_status == 200 || outcome.http_status == 400 ||
                   outcome.http_status == 415 || outcome.http_status == 422,
               "unexpected status %d", outcome.http_status);
    FUZZ_CHECK(!outcome.body.empty(), "an empty body");
    return outcome.body;
}

// `document` less the members the review parser leaves out, by the same names and path.
void erase_left_out(boost::json::value& document) {
    auto* request = document.is_object() ? document.as_object().if_contains("request") : nullptr;
    if (request == nullptr || !request->is_object()) {
        return;
    }
    for (const std::string_view name : {"resource", "requestKind", "requestResource", "options"}) {
        request->as_object().erase(name);
    }
    if (auto* user = request->as_object().if_contains("userInfo"); user && user->is_object()) {
        for (const std::string_view name : {"uid", "groups", "extra"}) {
            user->as_object().erase(name);
        }
    }
    for (const std::string_view name : {"object", "oldObject"}) {
        auto* object = request->as_object().if_contains(name);
        auto* metadata = object != nullptr && object->is_object()
                             ? object->as_object().if_contains("metadata")
                             : nullptr;
        if (metadata != nullptr && metadata->is_object()) {
            metadata->as_object().erase("annotations");
            metadata->as_object().erase("managedFields");
        }
    }
}

// What the review's tokenizer takes, Boost.JSON's parser reads with the same calls.
void check_tokenizer(std::string_view body) {
    constexpr std::size_t max_depth = rules::limits::max_json_depth;
    test::JsonCallRecorder own;
    std::string unescaped;
    if (!admission::tokenize_document(
            body, max_depth, [] { return false; }, own, unescaped)) {
        return;
    }
    const auto expected = test::boost_parser_calls(body, max_depth);
    FUZZ_CHECK(expected.has_value(), "the tokenizer takes what Boost.JSON refuses");
    FUZZ_CHECK(*expected == own.calls, "the tokenizer makes other calls than Boost.JSON's parser");
}

void check_review_parser(std::string_view body) {
    boost::json::parse_options options;
    options.max_depth = rules::limits::max_json_depth;
    boost::system::error_code expected_ec;
    boost::json::value expected = boost::json::parse(body, expected_ec, {}, options);
    const bool expected_error = expected_ec || !rules::numbers_are_finite(expected);

    static admission::ReviewParser parser(options);
    parser.reset(boost::json::storage_ptr());
    boost::system::error_code ec;
    const boost::json::value parsed = parser.write(body, ec);
    if (ec) {
        // A number beyond a double is refused where it is read, also where a later duplicate
        // key replaces it in Boost.JSON's DOM; any other error is Boost.JSON's own, the same
        // however the body was fed to the tokenizer.
        FUZZ_CHECK(parser.non_finite() || ec == expected_ec,
                   "the review parser fails (%s) where Boost.JSON %s", ec.message().c_str(),
                   expected_ec ? expected_ec.message().c_str() : "does not");
        return;
    }
    FUZZ_CHECK(!expected_error, "the review parser reads what Boost.JSON refuses");
    erase_left_out(expected);
    FUZZ_CHECK(parsed == expected, "the review parser read %s",
               boost::json::serialize(parsed).c_str());
}

// A value the annotations' check takes is one Boost.JSON reads, at the nesting it was checked for.
void check_checked_value(std::string_view body) {
    constexpr std::size_t nesting = 8;
    if (!admission::is_checked_json_value(body, nesting)) {
        return;
    }
    boost::json::parse_options options;
    options.max_depth = nesting;
    boost::system::error_code ec;
    const boost::json::value value = boost::json::parse(body, ec, {}, options);
    FUZZ_CHECK(!ec, "the check takes what Boost.JSON refuses (%s)", ec.message().c_str());
    FUZZ_CHECK(rules::numbers_are_finite(value), "the check takes a number beyond a double");
}

// Under the decoder-only check a ModelDeployment's CREATE is judged from a model built as the
// review is parsed; the same engine judging the object's DOM answers every review alike.
void check_built_models(std::string_view body) {
    static const rules::Engine decoder_only = rules::Engine::with_embedded_data(
        {rules::StructureCheck::decoder_only, rules::Enforcement{}});
    static const admission::Admission from_events(decoder_only);
    static const admission::Admission from_dom(
        [](const rules::Review& review) { return decoder_only.evaluate(review); },
        decoder_only.data());
    const std::string built = answer(from_events, admission::AdmissionPath::validate, body, true);
    const std::string read = answer(from_dom, admission::AdmissionPath::validate, body, true);
    FUZZ_CHECK(built == read, "a model built from events answers %s, its DOM %s", built.c_str(),
               read.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const admission::Admission admission(engine());
    const std::string_view body(reinterpret_cast<const char*>(data), size);
    check_tokenizer(body);
    check_review_parser(body);
    check_checked_value(body);
    check_built_models(body);
    for (const auto path : {admission::AdmissionPath::validate, admission::AdmissionPath::mutate}) {
        for (const bool lookup_found : {true, false}) {
            const std::string first = answer(admission, path, body, lookup_found);
            const std::string second = answer(admission, path, body, lookup_found);
            FUZZ_CHECK(first == second, "two answers to one review differ");
            boost::system::error_code ec;
            boost::json::parse(first, ec);
            FUZZ_CHECK(!ec, "the answer is not JSON: %s", first.c_str());
        }
    }
    return 0;
}
