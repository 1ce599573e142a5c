// Random but schema-shaped ModelDeployments (roles, kinds, ports, flags and values drawn from
// the data file's vocabularies, quantities) through the engine and the admission library.
// Invariants: no crash; the same verdict twice; the harness's judgement (the engine) and the
// server's (an AdmissionReview through admission) agree, and so do the decoder-only check's
// judgements of the object's DOM and of the model built as the review is parsed; every
// finding's field path names a
// field whose parent exists in the object; denied if and only if some finding denies.
#include <boost/json.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "check.hpp"
#include "mdadmit/admission/admission.hpp"
#include "mdadmit/rules/engine.hpp"

namespace {

using namespace mdadmit;
namespace json = boost::json;

// The fuzzer's bytes as a stream of choices; zeros once they run out.
class Choices {
  public:
    Choices(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

    std::size_t below(std::size_t bound) {
        if (bound <= 1) {
            return 0;
        }
        const std::size_t value = at_ < size_ ? data_[at_++] : 0;
        return value % bound;
    }
    bool flip() { return below(2) == 1; }
    template <typename T>
    const T& pick(const std::vector<T>& options) {
        return options[below(options.size())];
    }

  private:
    const std::uint8_t* data_;
    std::size_t size_;
    std::size_t at_ = 0;
};

struct Vocabulary {
    std::vector<std::string> flags;
    std::vector<std::string> values{"1",    "2",    "4",   "0",           "-1",
                                    "8000", "8100", "abc", "cache_aware", "round_robin",
                                    "true", "1.5",  ""};
    std::vector<std::string> routers{"llm-d-router", "vllm-router", "sglang-gateway", "nginx"};
    std::vector<std::string> engines{"vLLM", "SGLang", "vllm", "sglang", "tgi"};
    std::vector<std::string> versions{"0.11.0", "0.5.0", "v0.3.1", "latest", ""};
    std::vector<std::string> kinds{"Server", "Prefill", "Decode", "Encode", "server", "Router"};
    std::vector<std::string> names{"server", "prefill", "decode", "encode", "p", "Bad_Name"};
    std::vector<json::value> accelerators{1, 2, 8, 0, -1, "1", "2", "1500m", "two", "1.5.0"};
    std::vector<std::int64_t> ports{8000, 8100, 8200, 0, 70000};
    std::vector<std::string> images{"gpustack/llm-router:v0.3.1", "gpustack/llm-router:v0.4.0",
                                    "example.com/router:latest"};

    explicit Vocabulary(const rules::RuleData& data) {
        const auto add = [&](const std::vector<std::string>& more) {
            flags.insert(flags.end(), more.begin(), more.end());
        };
        add(data.policy_flags);
        add(data.ssl_flags);
        add(data.elastic_ep_owned_flags);
        for (const auto& router : data.routers) {
            add(router.owned_flags);
        }
        for (const auto& [engine, table] : data.parallelism) {
            for (const auto& degree : table.degrees) {
                add(degree.flags);
            }
            add(table.wiring_flags);
            add(table.narrowing_modes);
            add(table.multi_port_flags);
        }
        add({"--port", "--served-model-name", "--kv-transfer-config", "--", "-tp", "--policy"});
    }
};

json::array arguments(Choices& choices, const Vocabulary& words) {
    json::array out;
    for (std::size_t n = choices.below(7); n > 0; --n) {
        out.emplace_back(choices.pick(words.flags));
        if (choices.flip()) {
            out.emplace_back(choices.pick(words.values));
        }
    }
    return out;
}

json::value model_deployment(Choices& choices, const Vocabulary& words) {
    json::object spec{
        {"model", {{"name", "m"}}},
        {"engine",
         {{"name", choices.pick(words.engines)}, {"version", choices.pick(words.versions)}}}};
    if (choices.flip()) {
        json::object router{{"name", choices.pick(words.routers)}};
        if (choices.flip()) {
            router["extraArgs"] = arguments(choices, words);
        }
        if (choices.below(4) == 0) {
            router["image"] = choices.pick(words.images);
        }
        if (choices.below(4) == 0) {
            router["disaggregationThresholdTokens"] = 512;
        }
        spec["router"] = std::move(router);
    }
    json::array roles;
    for (std::size_t n = choices.below(5); n > 0; --n) {
        json::object role{{"name", choices.pick(words.names)}};
        if (choices.flip()) {
            role["kind"] = choices.pick(words.kinds);
        }
        if (choices.flip()) {
            role["replicas"] = static_cast<std::int64_t>(choices.below(4));
        }
        if (choices.flip()) {
            role["size"] = static_cast<std::int64_t>(choices.below(4));
        }
        if (choices.flip()) {
            role["ports"] = json::array{json::object{{"port", choices.pick(words.ports)}}};
        }
        if (choices.flip()) {
            role["extraArgs"] = arguments(choices, words);
        }
        if (choices.below(4) == 0) {
            role["resources"] = {{"accelerator", choices.pick(words.accelerators)}};
        }
        roles.push_back(std::move(role));
    }
    spec["roles"] = std::move(roles);
    return json::object{{"apiVersion", "worker.gpustack.ai/v1"},
                        {"kind", "ModelDeployment"},
                        {"metadata", {{"name", "chat"}, {"namespace", "ns"}}},
                        {"spec", std::move(spec)}};
}

// Whether every part of `path` but the last names a field of `object` (the last may be a
// field that is missing, such as a required one).
bool parent_exists(const json::value& object, const std::string& path) {
    std::vector<std::string> parts;  // "spec", "roles", "[1]", "extraArgs", "[3]"
    std::string part;
    for (const char c : path) {
        if (c == '.' || c == '[') {
            if (!part.empty()) {
                parts.push_back(part);
            }
            part = c == '[' ? "[" : "";
        } else if (c == ']') {
            parts.push_back(part + "]");
            part.clear();
        } else {
            part += c;
        }
    }
    if (!part.empty()) {
        parts.push_back(part);
    }
    const json::value* at = &object;
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
        const std::string& name = parts[i];
        if (name.front() == '[') {
            const auto* list = at->if_array();
            const std::size_t index = std::stoul(name.substr(1, name.size() - 2));
            if (list == nullptr || index >= list->size()) {
                return false;
            }
            at = &(*list)[index];
        } else {
            const auto* map = at->if_object();
            at = map != nullptr ? map->if_contains(name) : nullptr;
            if (at == nullptr) {
                return false;
            }
        }
    }
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const rules::Engine engine = rules::Engine::with_embedded_data();
    static const Vocabulary words(engine.data());
    static const admission::Admission admission(engine);
    Choices choices(data, size);
    const json::value object = model_deployment(choices, words);

    const rules::Evaluation first = engine.evaluate({object});
    const rules::Evaluation second = engine.evaluate({object});
    FUZZ_CHECK(first.findings == second.findings, "two judgements differ for %s",
               json::serialize(object).c_str());
    bool denies = false;
    for (const auto& finding : first.findings) {
        denies = denies || finding.severity == rules::Severity::deny;
        FUZZ_CHECK(parent_exists(object, finding.path), "%s names %s, not in %s",
                   std::string(finding.rule).c_str(), finding.path.c_str(),
                   json::serialize(object).c_str());
    }
    FUZZ_CHECK(denies == !first.allowed(), "allowed() disagrees with the findings");

    const std::string review = json::serialize(json::object{
        {"apiVersion", "admission.k8s.io/v1"},
        {"kind", "AdmissionReview"},
        {"request",
         {{"uid", "u"},
          {"kind",
           {{"group", "worker.gpustack.ai"}, {"version", "v1"}, {"kind", "ModelDeployment"}}},
          {"operation", "CREATE"},
          {"object", object}}}});
    auto answered = admission.admit(admission::AdmissionPath::validate, review, nullptr,
                                    admission::Clock::now() + std::chrono::hours(1));
    const auto& outcome = std::get<admission::Outcome>(answered);
    const bool allowed = json::parse(outcome.body).at("response").at("allowed").as_bool();
    FUZZ_CHECK(allowed == !denies, "the server says %s, the engine %s for %s",
               allowed ? "allowed" : "denied", denies ? "denied" : "allowed",
               json::serialize(object).c_str());

    // Under the decoder-only check the server judges a model built as the review is parsed:
    // the same findings as that engine judging the object's DOM, in the same order.
    static const rules::Engine decoder_only = rules::Engine::with_embedded_data(
        {rules::StructureCheck::decoder_only, rules::Enforcement{}});
    static const admission::Admission from_events(decoder_only);
    const rules::Evaluation from_dom = decoder_only.evaluate({object});
    auto built = from_events.admit(admission::AdmissionPath::validate, review, nullptr,
                                   admission::Clock::now() + std::chrono::hours(1));
    const auto& counted = std::get<admission::Outcome>(built).counts.findings;
    bool same = counted.size() == from_dom.findings.size();
    for (std::size_t i = 0; same && i < counted.size(); ++i) {
        same = counted[i].rule == from_dom.findings[i].rule &&
               counted[i].severity == from_dom.findings[i].severity;
    }
    FUZZ_CHECK(same, "a model built from events is judged otherwise than its DOM: %s",
               json::serialize(object).c_str());
    return 0;
}
