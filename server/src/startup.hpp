#pragma once

#include <memory>

#include "admission_handler.hpp"
#include "cluster_view.hpp"
#include "config.hpp"
#include "mdadmit/rules/engine.hpp"

namespace mdadmit::server {

// What the server judges with, loaded once at start-up from its settings: the rule engine
// (built-in or --rules-data, with --schema-check and --encode-platform-unknown) and the
// InstanceTypes of --instance-types, and the ModelDeployments of --cluster-files. An Error names
// the file and the problem.
struct JudgingSetup {
    std::unique_ptr<rules::Engine> engine;
    std::shared_ptr<InstanceTypeStore> instance_types;
    std::unique_ptr<ClusterView> cluster;  // --cluster-files, else the API; null: neither
    // Set when the cluster is read from the API: InstanceTypes are then listed from it too.
    const KubeClusterView* kube = nullptr;

    // The mutating path's setup for these settings; valid while this object lives.
    MutationSetup mutation(const Config& config) const;
};

rules::Result<JudgingSetup> load_judging_setup(const Config& config);

class Server;
class Log;

// With the API as the source and no --instance-types file, lists InstanceTypes at start and
// every --instance-types-refresh on the server's control thread.
void refresh_instance_types(Server& server, const JudgingSetup& setup, const Config& config,
                            const Log& log);

}  // namespace mdadmit::server
