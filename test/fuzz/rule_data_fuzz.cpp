// Replacement rule data files (--rules-data) into the loader: a file is refused with a message
// naming its field, or it loads, builds an engine and judges an object, never a crash.
#include <boost/json.hpp>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "check.hpp"
#include "mdadmit/rules/engine.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace mdadmit::rules;
    static const boost::json::value object = boost::json::parse(R"({
        "apiVersion": "worker.gpustack.ai/v1", "kind": "ModelDeployment",
        "metadata": {"name": "chat", "namespace": "ns"},
        "spec": {"model": {"name": "m"}, "engine": {"name": "SGLang", "version": "0.5.0"},
                 "router": {"name": "sglang-gateway", "extraArgs": ["--policy", "cache_aware"]},
                 "roles": [{"name": "p", "kind": "Prefill"},
                           {"name": "d", "kind": "Decode",
                            "extraArgs": ["--enable-dp-attention", "--dp-size", "2", "--port", "8000"]}]}})");
    auto parsed =
        parse_rule_data(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json");
    if (!parsed) {
        FUZZ_CHECK(parsed.error().message.rfind("rule data fuzz.json", 0) == 0,
                   "a refusal names the file: %s", parsed.error().message.c_str());
        return 0;
    }
    auto engine = Engine::create(std::move(parsed).value());
    if (engine) {
        const Evaluation first = engine.value().evaluate({object});
        const Evaluation second = engine.value().evaluate({object});
        FUZZ_CHECK(first.findings.size() == second.findings.size(),
                   "the same object judged twice differs");
    }
    return 0;
}
