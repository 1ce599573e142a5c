#include "startup.hpp"

#include <cstdlib>

#include "log.hpp"
#include "mdadmit/inputs/documents.hpp"
#include "server.hpp"

namespace mdadmit::server {

rules::Result<JudgingSetup> load_judging_setup(const Config& config) {
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
    auto engine = rules::Engine::create(std::move(data), options);
    if (!engine) {
        return engine.error();
    }
    rules::InstanceTypes types;
    if (!config.instance_types_file.empty()) {
        auto documents = inputs::read_documents(config.instance_types_file);
        if (!documents) {
            return documents.error();
        }
        inputs::collect_instance_types(documents.value(), types);
    }
    JudgingSetup setup{std::make_unique<rules::Engine>(std::move(engine).value()),
                       std::make_shared<InstanceTypeStore>(std::move(types)), nullptr, nullptr};
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

void refresh_instance_types(Server& server, const JudgingSetup& setup, const Config& config,
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

MutationSetup JudgingSetup::mutation(const Config& config) const {
    return MutationSetup{cluster.get(), &engine->data(),
                         rules::ContainerNames{config.router_container, config.engine_container,
                                               config.sidecar_container},
                         config.deny_unreadable_mutations};
}

}  // namespace mdadmit::server
