#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "cluster_view.hpp"
#include "instance_type_store.hpp"
#include "kube_client.hpp"
#include "log.hpp"
#include "metrics.hpp"
#include "readiness.hpp"

namespace mdadmit::server {

struct CacheSettings {
    // How long the API server keeps one watch open before the cache starts the next one.
    std::chrono::seconds watch_timeout{300};
    // The first wait after a failure; it doubles, with jitter, up to the maximum.
    std::chrono::milliseconds backoff_initial{500};
    std::chrono::milliseconds backoff_max{30'000};
    // How long a lookup that misses the cache waits for its GET at most.
    std::chrono::milliseconds fetch_timeout{10'000};
};

// The cluster as informers see it: ModelDeployments (and, unless a file gives them,
// InstanceTypes) listed and then watched from the Kubernetes API, as controller-runtime's
// informers do: resourceVersion resumes, bookmarks, a new list on 410 Gone, backoff with
// jitter. The informers run on the server's control executor; a Pod's lookup is a read of the
// cache from any thread. A ModelDeployment the cache does not hold is fetched with one GET,
// which concurrent lookups of the same object share.
class ClusterCache : public ClusterView {
  public:
    // `instance_types` null: InstanceTypes come from elsewhere and are not watched.
    ClusterCache(boost::asio::any_io_executor executor, std::shared_ptr<const KubeApi> api,
                 std::shared_ptr<InstanceTypeStore> instance_types, Readiness& readiness,
                 Metrics& metrics, const Log& log, CacheSettings settings = {});
    ~ClusterCache() override;

    // Starts the informers on the executor (they run until the executor stops).
    void start();

    boost::asio::awaitable<Lookup> model_deployment(
        std::string namespace_name, std::string name,
        std::chrono::steady_clock::time_point deadline) const override;
    std::vector<std::shared_ptr<const boost::json::value>> model_deployments() const override;

  private:
    struct Resource;
    struct Flight;

    boost::asio::awaitable<void> inform(Resource& resource);
    boost::asio::awaitable<void> backoff(std::chrono::milliseconds& wait);
    boost::asio::awaitable<Lookup> fetch_shared(
        std::string key, std::string path, std::chrono::steady_clock::time_point deadline) const;
    boost::asio::awaitable<void> fetch(std::string key, std::string path,
                                       std::shared_ptr<Flight> flight) const;
    void replace_deployments(const std::vector<boost::json::value>& items);
    void apply_deployment(std::string_view type, const boost::json::value& object);
    void replace_instance_types(const std::vector<boost::json::value>& items);
    void apply_instance_type(std::string_view type, const boost::json::value& object);
    void synced(Resource& resource);

    boost::asio::any_io_executor executor_;
    std::shared_ptr<const KubeApi> api_;
    std::shared_ptr<InstanceTypeStore> instance_types_;
    Readiness& readiness_;
    Metrics& metrics_;
    const Log& log_;
    CacheSettings settings_;
    std::vector<std::unique_ptr<Resource>> resources_;

    // Read by lookups on any thread, written by the informer on the executor.
    mutable std::shared_mutex mutex_;
    std::unordered_map<std::string, std::shared_ptr<const boost::json::value>> deployments_;

    // The executor's alone: InstanceTypes by name, GETs in flight by key, idle connections.
    std::map<std::string, rules::InstanceType> types_;
    mutable std::map<std::string, std::shared_ptr<Flight>> flights_;
    mutable std::vector<std::unique_ptr<KubeConnection>> idle_connections_;
};

}  // namespace mdadmit::server
