// mdadmit review: an AdmissionReview in, the webhook's exact response out, through the same
// handler the server runs.
#include <fstream>
#include <iostream>
#include <sstream>

#include "admission_handler.hpp"
#include "commands.hpp"
#include "mdadmit/inputs/documents.hpp"

namespace mdadmit::cli {

int run_review(const Options& options) {
    if (options.inputs.size() != 1) {
        std::cerr << "mdadmit review: give one AdmissionReview file, or - for standard input\n";
        return exit_usage;
    }
    auto engine = make_engine(options, false);
    if (!engine) {
        std::cerr << "mdadmit: " << engine.error().message << "\n";
        return exit_usage;
    }
    std::ostringstream body;
    if (options.inputs[0] == "-") {
        body << std::cin.rdbuf();
    } else {
        std::ifstream in(options.inputs[0], std::ios::binary);
        if (!in) {
            std::cerr << "mdadmit: " << options.inputs[0] << ": cannot open the file\n";
            return exit_usage;
        }
        body << in.rdbuf();
    }
    rules::InstanceTypes instance_types;
    for (const auto& path : options.instance_type_files) {
        auto documents = inputs::read_documents(path);
        if (!documents) {
            std::cerr << "mdadmit: " << documents.error().message << "\n";
            return exit_usage;
        }
        inputs::collect_instance_types(documents.value(), instance_types);
    }
    server::Metrics unused_metrics;
    const server::AdmissionHandler handler(
        engine.value(), std::make_shared<server::InstanceTypeStore>(std::move(instance_types)),
        unused_metrics);
    const auto outcome = handler.handle(server::AdmissionPath::validate, body.str(),
                                        server::Clock::now() + std::chrono::hours(1));
    std::cout << outcome.body << "\n";
    if (outcome.http_status != 200) {
        std::cerr << "mdadmit: the webhook would answer HTTP " << outcome.http_status << "\n";
        return exit_usage;
    }
    return outcome.verdict == "allowed" ? exit_admitted : exit_denied;
}

}  // namespace mdadmit::cli
