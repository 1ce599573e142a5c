#pragma once

#include <boost/json/value.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>

#include "kube_client.hpp"
#include "mdadmit/admission/admission.hpp"
#include "mdadmit/rules/instance_type.hpp"
#include "mdadmit/rules/result.hpp"

namespace mdadmit::server {

using admission::Lookup;

// Where the mutating path reads a Pod's ModelDeployment from.
class ClusterView {
  public:
    virtual ~ClusterView() = default;
    // Never holds the calling thread, and answers by `deadline`.
    virtual boost::asio::awaitable<Lookup> model_deployment(
        std::string namespace_name, std::string name,
        std::chrono::steady_clock::time_point deadline) const = 0;
};

// ModelDeployments read from manifest files (a file or a mounted directory) at start-up:
// for the harness, and for clusters that do not grant the webhook API reads.
class FileClusterView : public ClusterView {
  public:
    static rules::Result<FileClusterView> load(const std::string& path);

    boost::asio::awaitable<Lookup> model_deployment(
        std::string namespace_name, std::string name,
        std::chrono::steady_clock::time_point deadline) const override;

  private:
    std::map<std::string, boost::json::value, std::less<>> deployments_;  // "namespace/name"
};

// ModelDeployments read from the Kubernetes API with the in-cluster service account, kept
// for a short time so that the Pods of one rollout cost one read. The blocking reads run on
// a pool of their own, never on an I/O thread.
class KubeClusterView : public ClusterView {
  public:
    KubeClusterView(std::shared_ptr<const KubeClient> client, std::chrono::milliseconds cache_ttl);
    ~KubeClusterView() override;

    boost::asio::awaitable<Lookup> model_deployment(
        std::string namespace_name, std::string name,
        std::chrono::steady_clock::time_point deadline) const override;

    // Every InstanceType's manufacturer, listed from the API (cluster-scoped objects).
    rules::Result<rules::InstanceTypes> instance_types(
        std::chrono::steady_clock::time_point deadline) const;

  private:
    boost::asio::awaitable<Lookup> read_on_pool(
        std::string namespace_name, std::string name,
        std::chrono::steady_clock::time_point deadline) const;
    Lookup read(const std::string& namespace_name, const std::string& name,
                std::chrono::steady_clock::time_point deadline) const;

    struct Cached {
        Lookup lookup;
        std::chrono::steady_clock::time_point fetched;
    };
    std::shared_ptr<const KubeClient> client_;
    std::chrono::milliseconds cache_ttl_;
    mutable std::mutex mutex_;
    mutable std::map<std::string, Cached, std::less<>> cache_;
    mutable boost::asio::thread_pool blocking_{2};
};

}  // namespace mdadmit::server
