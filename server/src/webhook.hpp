#pragma once

#include <memory>

#include "cluster_view.hpp"
#include "config.hpp"
#include "instance_type_store.hpp"
#include "kube_client.hpp"
#include "log.hpp"
#include "mdadmit/admission/admission.hpp"
#include "mdadmit/inputs/judging.hpp"
#include "metrics.hpp"
#include "readiness.hpp"
#include "routes.hpp"
#include "server.hpp"

namespace mdadmit::server {

// What the webhook judges with and reads, loaded once at start-up from its settings: the
// judging setup the harness builds the same way (rule data, structural check,
// --enforce, --instance-types), and where Pods' ModelDeployments come from
// (--cluster-files, else the Kubernetes API). An Error names the file and the problem.
struct WebhookSetup {
    std::unique_ptr<rules::Engine> engine;
    std::shared_ptr<InstanceTypeStore> instance_types;
    std::unique_ptr<FileClusterView> files;  // --cluster-files
    std::shared_ptr<const KubeApi> api;      // else the API server, when one is known
};

inputs::JudgingOptions judging_options(const Config& config);
admission::MutationOptions mutation_options(const Config& config);
rules::Result<WebhookSetup> load_webhook_setup(const Config& config);

// The whole webhook, assembled from its settings: what main runs, and what the integration
// tests start on loopback.
class ClusterCache;
class Auditor;

class Webhook {
  public:
    static rules::Result<std::unique_ptr<Webhook>> create(const Config& config, const Log& log);
    ~Webhook();

    // Binds the listeners and starts the threads (and the InstanceType refresh from the API).
    rules::Result<bool> start();
    Server& server() { return *server_; }
    Metrics& metrics() { return metrics_; }

  private:
    Webhook(const Config& config, WebhookSetup setup, const Log& log);

    Config config_;
    WebhookSetup setup_;
    const Log& log_;
    Metrics metrics_;
    Readiness readiness_;
    admission::Admission admission_;
    Routes routes_;
    std::unique_ptr<Server> server_;
    std::unique_ptr<ClusterCache> cache_;  // when the API is read
    std::unique_ptr<Auditor> auditor_;     // when a cluster is read and --audit-interval is set
};

}  // namespace mdadmit::server
