#include "webhook.hpp"

#include <cstdlib>

#include "log.hpp"
#include "server.hpp"

namespace mdadmit::server {

inputs::JudgingOptions judging_options(const Config& config) {
    inputs::JudgingOptions options;
    options.rules_data_file = config.rules_data_file;
    options.structure_check = config.full_schema_check ? rules::StructureCheck::full
                                                       : rules::StructureCheck::decoder_only;
    options.encode_platform_unknown = config.encode_platform_unknown;
    if (!config.instance_types_file.empty()) {
        options.instance_type_files.push_back(config.instance_types_file);
    }
    return options;
}

admission::MutationOptions mutation_options(const Config& config) {
    return {rules::ContainerNames{config.router_container, config.engine_container,
                                  config.sidecar_container},
            config.deny_unreadable_mutations};
}

rules::Result<WebhookSetup> load_webhook_setup(const Config& config) {
    auto judging = inputs::load_judging(judging_options(config));
    if (!judging) {
        return judging.error();
    }
    WebhookSetup setup{
        std::make_unique<rules::Engine>(std::move(judging.value().engine)),
        std::make_shared<InstanceTypeStore>(std::move(judging.value().instance_types)), nullptr,
        nullptr};
    if (!config.cluster_files.empty()) {
        auto view = FileClusterView::load(config.cluster_files);
        if (!view) {
            return view.error();
        }
        setup.cluster = std::make_unique<FileClusterView>(std::move(view).value());
        return setup;
    }
    KubeSettings kube{config.kube_host, config.kube_port, config.kube_token_file,
                      config.kube_ca_file, config.kube_server_name};
    if (kube.host.empty()) {
        const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
        const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
        kube.host = host != nullptr ? host : "";
        kube.port = port != nullptr ? static_cast<unsigned short>(std::atoi(port)) : 443;
    }
    if (kube.host.empty()) {
        return setup;  // outside a cluster with no files: the mutating path admits unchanged
    }
    auto client = KubeClient::create(std::move(kube));
    if (!client) {
        return client.error();
    }
    auto view = std::make_unique<KubeClusterView>(std::move(client).value(), config.kube_cache_ttl);
    setup.kube = view.get();
    setup.cluster = std::move(view);
    return setup;
}

namespace {

// With the API as the source and no --instance-types file, lists InstanceTypes at start and
// every --instance-types-refresh on the server's control thread.
void refresh_instance_types(Server& server, const WebhookSetup& setup, const Config& config,
                            const Log& log) {
    if (setup.kube == nullptr || !config.instance_types_file.empty()) {
        return;
    }
    // InstanceTypes change rarely: listed in the background, never on a request's path.
    server.every(
        config.instance_types_refresh, [kube = setup.kube, &log, store = setup.instance_types] {
            auto types =
                kube->instance_types(std::chrono::steady_clock::now() + std::chrono::seconds(5));
            if (!types) {
                log.write(LogLevel::warn, "InstanceTypes not refreshed",
                          {{"error", types.error().message}});
                return;
            }
            store->replace(std::move(types).value());
        });
}

}  // namespace

rules::Result<std::unique_ptr<Webhook>> Webhook::create(const Config& config, const Log& log) {
    auto setup = load_webhook_setup(config);
    if (!setup) {
        return setup.error();
    }
    return std::unique_ptr<Webhook>(new Webhook(config, std::move(setup).value(), log));
}

Webhook::Webhook(const Config& config, WebhookSetup setup, const Log& log)
    : config_(config),
      setup_(std::move(setup)),
      log_(log),
      admission_(*setup_.engine, mutation_options(config_)),
      routes_(admission_, *setup_.instance_types, readiness_, metrics_,
              {config_.max_body_bytes, std::chrono::milliseconds(10'000)}),
      server_(std::make_unique<Server>(config_, routes_, setup_.cluster.get(), readiness_, metrics_,
                                       log_)) {
    readiness_.rules_loaded = true;
    refresh_instance_types(*server_, setup_, config_, log_);
}

rules::Result<bool> Webhook::start() {
    return server_->start();
}

}  // namespace mdadmit::server
