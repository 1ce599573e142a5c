#pragma once

#include <boost/json/value.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "kube_client.hpp"
#include "mdadmit/rules/instance_type.hpp"
#include "mdadmit/rules/result.hpp"

namespace mdadmit::server {

// The answer to "what is ModelDeployment namespace/name?".
struct Lookup {
    enum class Status { found, not_found, unreadable } status = Status::not_found;
    boost::json::value object;  // when found
    std::string error;          // when unreadable
};

std::string_view to_string(Lookup::Status status);

// What the mutating path reads of the cluster: a Pod's ModelDeployment.
class ClusterView {
  public:
    virtual ~ClusterView() = default;
    // Never blocks past `deadline`.
    virtual Lookup model_deployment(std::string_view namespace_name, std::string_view name,
                                    std::chrono::steady_clock::time_point deadline) const = 0;
};

// ModelDeployments read from manifest files (a file or a mounted directory) at start-up:
// for the harness, and for clusters that do not grant the webhook API reads.
class FileClusterView : public ClusterView {
  public:
    static rules::Result<FileClusterView> load(const std::string& path);

    Lookup model_deployment(std::string_view namespace_name, std::string_view name,
                            std::chrono::steady_clock::time_point deadline) const override;

  private:
    std::map<std::string, boost::json::value, std::less<>> deployments_;  // "namespace/name"
};

// ModelDeployments read from the Kubernetes API with the in-cluster service account, kept
// for a short time so that the Pods of one rollout cost one read.
class KubeClusterView : public ClusterView {
  public:
    KubeClusterView(std::shared_ptr<const KubeClient> client, std::chrono::milliseconds cache_ttl);

    Lookup model_deployment(std::string_view namespace_name, std::string_view name,
                            std::chrono::steady_clock::time_point deadline) const override;

    // Every InstanceType's manufacturer, listed from the API (cluster-scoped objects).
    rules::Result<rules::InstanceTypes> instance_types(
        std::chrono::steady_clock::time_point deadline) const;

  private:
    struct Cached {
        Lookup lookup;
        std::chrono::steady_clock::time_point fetched;
    };
    std::shared_ptr<const KubeClient> client_;
    std::chrono::milliseconds cache_ttl_;
    mutable std::mutex mutex_;
    mutable std::map<std::string, Cached, std::less<>> cache_;
};

}  // namespace mdadmit::server
