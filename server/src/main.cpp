// mdadmit-webhook: the ModelDeployment admission webhook server.
#include <iostream>
#include <memory>

#include "admission_handler.hpp"
#include "config.hpp"
#include "log.hpp"
#include "mdadmit/inputs/documents.hpp"
#include "mdadmit/rules/engine.hpp"
#include "server.hpp"

namespace {

using namespace mdadmit;

// Exit statuses: 0 after a clean drain, 1 when the drain timed out or a second signal came,
// 2 for a configuration or start-up error.
constexpr int exit_usage = 2;

rules::Result<rules::Engine> make_engine(const server::Config& config) {
    rules::RuleData data = rules::embedded_rule_data();
    if (!config.rules_data_file.empty()) {
        auto loaded = rules::load_rule_data_file(config.rules_data_file);
        if (!loaded) {
            return loaded.error();
        }
        data = std::move(loaded).value();
    }
    rules::EngineOptions options;
    options.structure_check = config.full_schema_check ? rules::StructureCheck::full
                                                       : rules::StructureCheck::decoder_only;
    options.encode_platform_unknown_severity = config.encode_platform_unknown;
    return rules::Engine::create(std::move(data), options);
}

rules::Result<std::shared_ptr<const rules::InstanceTypes>> load_instance_types(
    const server::Config& config) {
    auto types = std::make_shared<rules::InstanceTypes>();
    if (!config.instance_types_file.empty()) {
        auto documents = inputs::read_documents(config.instance_types_file);
        if (!documents) {
            return documents.error();
        }
        inputs::collect_instance_types(documents.value(), *types);
    }
    return std::shared_ptr<const rules::InstanceTypes>(std::move(types));
}

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
    auto engine = make_engine(config);
    auto instance_types = load_instance_types(config);
    if (!engine || !instance_types) {
        log.write(server::LogLevel::error, "cannot start",
                  {{"error", !engine ? engine.error().message : instance_types.error().message}});
        return exit_usage;
    }
    server::Metrics metrics;
    server::Readiness readiness;
    readiness.rules_loaded = true;
    const server::AdmissionHandler admission(engine.value(), instance_types.value(), metrics);
    const server::Routes routes(admission, readiness, metrics,
                                {config.max_body_bytes, std::chrono::milliseconds(10'000)});
    server::Server webhook(config, routes, readiness, metrics, log);
    webhook.handle_signals();
    if (auto started = webhook.start(); !started) {
        log.write(server::LogLevel::error, "cannot start", {{"error", started.error().message}});
        return exit_usage;
    }
    return webhook.wait() ? 0 : 1;
}
