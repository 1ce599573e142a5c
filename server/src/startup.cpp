#include "startup.hpp"

#include "mdadmit/inputs/documents.hpp"

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
    auto types = std::make_shared<rules::InstanceTypes>();
    if (!config.instance_types_file.empty()) {
        auto documents = inputs::read_documents(config.instance_types_file);
        if (!documents) {
            return documents.error();
        }
        inputs::collect_instance_types(documents.value(), *types);
    }
    std::unique_ptr<ClusterView> cluster;
    if (!config.cluster_files.empty()) {
        auto view = FileClusterView::load(config.cluster_files);
        if (!view) {
            return view.error();
        }
        cluster = std::make_unique<FileClusterView>(std::move(view).value());
    }
    return JudgingSetup{std::make_unique<rules::Engine>(std::move(engine).value()),
                        std::move(types), std::move(cluster)};
}

MutationSetup JudgingSetup::mutation(const Config& config) const {
    return MutationSetup{cluster.get(), &engine->data(),
                         rules::ContainerNames{config.router_container, config.engine_container,
                                               config.sidecar_container},
                         config.deny_unreadable_mutations};
}

}  // namespace mdadmit::server
