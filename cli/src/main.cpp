// mdadmit: judges ModelDeployment manifests offline with the same rule engine as the webhook.
#include <iostream>
#include <map>
#include <string_view>

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
        static const std::map<std::string_view, int (*)(const Options&)> commands{
            {"check", run_check}, {"audit", run_audit},   {"review", run_review},
            {"test", run_test},   {"render", run_render}, {"rules", run_rules}};
        if (const auto it = commands.find(command); it != commands.end()) {
            return it->second(options.value());
        }
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
