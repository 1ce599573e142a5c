// mdadmit review: an AdmissionReview in, the webhook's exact response out, through the same
// handler the server runs.
#include <fstream>
#include <iostream>
#include <sstream>

#include "commands.hpp"
#include "mdadmit/admission/admission.hpp"

namespace mdadmit::cli {

int run_review(const Options& options) {
    if (options.inputs.size() != 1) {
        std::cerr << "mdadmit review: give one AdmissionReview file, or - for standard input\n";
        return exit_usage;
    }
    auto judging = make_judging(options, false);
    if (!judging) {
        std::cerr << "mdadmit: " << judging.error().message << "\n";
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
    const admission::Admission admission(judging.value().engine);
    // The validating path never waits on the cluster: its answer comes in one step.
    const auto outcome = std::get<admission::Outcome>(admission.admit(
        admission::AdmissionPath::validate, body.str(), &judging.value().instance_types,
        admission::Clock::now() + std::chrono::hours(1)));
    std::cout << outcome.body << "\n";
    if (outcome.http_status != 200) {
        std::cerr << "mdadmit: the webhook would answer HTTP " << outcome.http_status << "\n";
        return exit_usage;
    }
    return outcome.verdict == "allowed" ? exit_admitted : exit_denied;
}

}  // namespace mdadmit::cli
