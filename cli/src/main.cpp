// mdadmit: judges ModelDeployment manifests offline with the same rule engine as the webhook.
#include <iostream>

#include "commands.hpp"

int main(int argc, char** argv) {
    using namespace mdadmit::cli;
    try {
        auto options = parse_options(std::vector<std::string>(argv + 1, argv + argc));
        if (!options) {
            std::cerr << "mdadmit: " << options.error().message
                      << (argc > 1 ? "\n(see mdadmit --help)\n" : "");
            return exit_usage;
        }
        const std::string& command = options.value().command;
        if (command == "check")
            return run_check(options.value());
        if (command == "review")
            return run_review(options.value());
        if (command == "test")
            return run_test(options.value());
        if (command == "rules")
            return run_rules(options.value());
        if (command == "--help" || command == "help" || command == "-h") {
            std::cout << usage;
            return exit_admitted;
        }
        std::cerr << "mdadmit: unknown command " << command << "\n" << usage;
        return exit_usage;
    } catch (const std::exception& e) {
        std::cerr << "mdadmit: internal error: " << e.what() << "\n";
        return exit_internal;
    }
}
