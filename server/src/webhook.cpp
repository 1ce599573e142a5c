#include "webhook.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "auditor.hpp"
#include "cluster_cache.hpp"

#include "log.hpp"
#include "server.hpp"

namespace mdadmit::server {

inputs::JudgingOptions judging_options(const Config& config) {
    inputs::JudgingOptions options;
    options.rules_data_file = config.rules_data_file;
    options.structure_check = config.full_schema_check ? rules::StructureCheck::full
                                                       : rules::StructureCheck::decoder_only;
    options.enforcement = config.enforcement;
    if (!config.instance_types_file.empty()) {
        options.instance_type_files.push_back(config.instance_types_file);
    }
    return options;
}

namespace {

std::string host_name() {
    char name[256] = {};
    ::gethostname(name, sizeof name - 1);
    return name;
}

}  // namespace

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
        setup.files = std::make_unique<FileClusterView>(std::move(view).value());
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
    auto api = KubeApi::create(std::move(kube));
    if (!api) {
        return api.error();
    }
    setup.api = std::move(api).value();
    return setup;
}

rules::Result<std::unique_ptr<Webhook>> Webhook::create(const Config& config, const Log& log) {
    auto setup = load_webhook_setup(config);
    if (!setup) {
        return setup.error();
    }
    if (config.policy_reports && (setup.value().api == nullptr || !config.audit_interval)) {
        return rules::Error{
            "--policy-reports=on needs the Kubernetes API (not --cluster-files) and an "
            "--audit-interval"};
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
      server_(std::make_unique<Server>(config_, routes_, readiness_, metrics_, log_)) {
    readiness_.rules_loaded = true;
    if (setup_.files != nullptr) {
        server_->read_cluster_from(setup_.files.get());
    } else if (setup_.api != nullptr) {
        // The API is watched on the server's control thread; InstanceTypes too, unless a
        // file gives them.
        cache_ = std::make_unique<ClusterCache>(
            server_->control_executor(), setup_.api,
            config_.instance_types_file.empty() ? setup_.instance_types : nullptr, readiness_,
            metrics_, log_,
            CacheSettings{std::max(
                std::chrono::seconds(1),
                std::chrono::duration_cast<std::chrono::seconds>(config_.kube_watch_timeout))});
        server_->read_cluster_from(cache_.get());
    }
    const ClusterView* view =
        cache_ != nullptr ? static_cast<const ClusterView*>(cache_.get()) : setup_.files.get();
    if (view != nullptr && config_.audit_interval) {
        auditor_ = std::make_unique<Auditor>(server_->control_executor(), *setup_.engine, *view,
                                             *setup_.instance_types, readiness_, metrics_, log_,
                                             *config_.audit_interval);
        server_->on_shutdown([auditor = auditor_.get()] { auditor->stop(); });
        if (config_.policy_reports) {
            // By default the Lease outlives a few audits, so the writer stays the same while
            // it runs.
            const auto duration =
                std::max(std::chrono::seconds(1),
                         std::chrono::ceil<std::chrono::seconds>(
                             config_.lease_duration.value_or(3 * *config_.audit_interval)));
            auditor_->report_to(std::make_unique<PolicyReporter>(
                server_->control_executor(), setup_.api, setup_.engine->data(),
                LeaderLease(config_.lease_namespace, "mdadmit-policy-reports",
                            config_.leader_identity.empty() ? host_name() : config_.leader_identity,
                            duration),
                log_));
        }
    }
}

Webhook::~Webhook() {
    // The threads stop before the cache they read is destroyed, and the cache's connections
    // close before the executor they belong to is destroyed with the server.
    server_->stop();
    auditor_.reset();
    cache_.reset();
    server_.reset();
}

rules::Result<bool> Webhook::start() {
    if (cache_ != nullptr) {
        cache_->start();
    }
    if (auditor_ != nullptr) {
        auditor_->start();
    }
    return server_->start();
}

}  // namespace mdadmit::server
