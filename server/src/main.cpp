// mdadmit-webhook: the ModelDeployment admission webhook server.
#include <iostream>
#include <memory>

#include "config.hpp"
#include "log.hpp"
#include "webhook.hpp"

namespace {

using namespace mdadmit;

// Exit statuses: 0 after a clean drain, 1 when the drain timed out or a second signal came,
// 2 for a configuration or start-up error.
constexpr int exit_usage = 2;

}  // namespace

int main(int argc, char** argv) {
    server::Help help = server::Help::none;
    auto parsed = server::parse_config(std::vector<std::string>(argv + 1, argv + argc), help);
    if (help != server::Help::none) {
        std::cout << (help == server::Help::usage ? server::usage_text()
                                                  : server::settings_markdown());
        return 0;
    }
    if (!parsed) {
        std::cerr << "mdadmit-webhook: " << parsed.error().message << "\n";
        return exit_usage;
    }
    const server::Config& config = parsed.value();
    const server::Log log(config.log_level, config.log_json);
    auto webhook = server::Webhook::create(config, log);
    if (!webhook) {
        log.write(server::LogLevel::error, "cannot start", {{"error", webhook.error().message}});
        return exit_usage;
    }
    webhook.value()->server().handle_signals();
    if (auto started = webhook.value()->start(); !started) {
        log.write(server::LogLevel::error, "cannot start", {{"error", started.error().message}});
        return exit_usage;
    }
    return webhook.value()->server().wait() ? 0 : 1;
}
