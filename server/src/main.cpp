// mdadmit-webhook: the ModelDeployment admission webhook server.
#include <iostream>
#include <memory>

#include "admission_handler.hpp"
#include "config.hpp"
#include "log.hpp"
#include "server.hpp"
#include "startup.hpp"

namespace {

using namespace mdadmit;

// Exit statuses: 0 after a clean drain, 1 when the drain timed out or a second signal came,
// 2 for a configuration or start-up error.
constexpr int exit_usage = 2;

}  // namespace

int main(int argc, char** argv) {
    bool help = false;
    auto parsed = server::parse_config(std::vector<std::string>(argv + 1, argv + argc), help);
    if (help) {
        std::cout << server::usage_text();
        return 0;
    }
    if (!parsed) {
        std::cerr << "mdadmit-webhook: " << parsed.error().message << "\n";
        return exit_usage;
    }
    const server::Config& config = parsed.value();
    const server::Log log(config.log_level, config.log_json);
    auto setup = server::load_judging_setup(config);
    if (!setup) {
        log.write(server::LogLevel::error, "cannot start", {{"error", setup.error().message}});
        return exit_usage;
    }
    server::Metrics metrics;
    server::Readiness readiness;
    readiness.rules_loaded = true;
    const server::AdmissionHandler admission(*setup.value().engine, setup.value().instance_types,
                                             metrics, setup.value().mutation(config));
    const server::Routes routes(admission, readiness, metrics,
                                {config.max_body_bytes, std::chrono::milliseconds(10'000)});
    server::Server webhook(config, routes, readiness, metrics, log);
    webhook.handle_signals();
    server::refresh_instance_types(webhook, setup.value(), config, log);
    if (auto started = webhook.start(); !started) {
        log.write(server::LogLevel::error, "cannot start", {{"error", started.error().message}});
        return exit_usage;
    }
    return webhook.wait() ? 0 : 1;
}
