// AdmissionReview bytes into the admission library, on both paths: any input gets an answer
// (an AdmissionReview or an HTTP error), never a crash, and the same answer twice.
#include <boost/json.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <variant>

#include "check.hpp"
#include "mdadmit/admission/admission.hpp"
#include "mdadmit/rules/engine.hpp"

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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const admission::Admission admission(engine());
    const std::string_view body(reinterpret_cast<const char*>(data), size);
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
