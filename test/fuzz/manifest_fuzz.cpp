// YAML and JSON manifests into the inputs reader (what `mdadmit check`, --instance-types and
// --cluster-files read): every input returns, with documents or with an error naming the
// source, and reading twice gives the same documents.
#include <cstddef>
#include <cstdint>
#include <string>

#include "check.hpp"
#include "mdadmit/inputs/documents.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace mdadmit;
    const std::string text(reinterpret_cast<const char*>(data), size);
    const auto first = inputs::parse_documents(text, "fuzz.yaml");
    const auto second = inputs::parse_documents(text, "fuzz.yaml");
    FUZZ_CHECK(first.ok() == second.ok(), "reading twice gives two verdicts");
    if (!first) {
        FUZZ_CHECK(first.error().message.rfind("fuzz.yaml", 0) == 0,
                   "an error names the source: %s", first.error().message.c_str());
        return 0;
    }
    FUZZ_CHECK(first.value().size() == second.value().size(),
               "reading twice gives other documents");
    for (std::size_t i = 0; i < first.value().size(); ++i) {
        FUZZ_CHECK(first.value()[i].value == second.value()[i].value, "document %zu differs", i);
    }
    rules::InstanceTypes instance_types;
    inputs::collect_instance_types(first.value(), instance_types);
    return 0;
}
