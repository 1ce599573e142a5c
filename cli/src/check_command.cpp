// mdadmit check: judge manifests as the webhook would, before they are applied.
#include <unistd.h>

#include <boost/json.hpp>
#include <cstdlib>
#include <iostream>

#include "commands.hpp"
#include "mdadmit/inputs/documents.hpp"
#include "report.hpp"

namespace mdadmit::cli {

namespace {

namespace json = boost::json;

// The old object for `document`: the one with the same namespace and name, or the only one.
const json::value* old_for(const json::value& document, const std::vector<inputs::Document>& olds) {
    const std::string name = object_name(document);
    for (const auto& old : olds) {
        if (object_name(old.value) == name) {
            return &old.value;
        }
    }
    return olds.size() == 1 ? &olds.front().value : nullptr;
}

}  // namespace

bool use_colour() {
    return ::isatty(STDOUT_FILENO) == 1 && std::getenv("NO_COLOR") == nullptr;
}

int run_check(const Options& options) {
    auto judging = start_command(options);
    if (!judging) {
        return exit_usage;
    }
    auto documents_read = inputs::read_inputs(options.inputs);
    auto olds_read =
        inputs::read_inputs(options.old_file ? std::vector<std::string>{*options.old_file}
                                             : std::vector<std::string>{});
    for (const auto* read : {&documents_read, &olds_read}) {
        if (!*read) {
            std::cerr << "mdadmit: " << read->error().message << "\n";
            return exit_usage;
        }
    }
    const std::vector<inputs::Document>& documents = documents_read.value();
    std::vector<inputs::Document> old_documents = std::move(olds_read).value();
    rules::InstanceTypes& instance_types = judging->instance_types;
    inputs::collect_instance_types(documents, instance_types);
    std::erase_if(old_documents, [](const inputs::Document& d) {
        return inputs::kind_of(d.value) != "ModelDeployment";
    });

    std::vector<Judged> judged;
    for (const auto& document : documents) {
        if (inputs::kind_of(document.value) != "ModelDeployment") {
            continue;
        }
        const json::value* old = old_for(document.value, old_documents);
        judged.push_back({&document, object_name(document.value),
                          judging->engine.evaluate({document.value, old, &instance_types,
                                                    old != nullptr ? rules::Operation::update
                                                                   : rules::Operation::create})});
    }
    if (judged.empty()) {
        std::cerr << "mdadmit: no ModelDeployment found in the inputs\n";
        return exit_usage;
    }
    return report(judged, judging->engine, options, "mdadmit check");
}

}  // namespace mdadmit::cli
