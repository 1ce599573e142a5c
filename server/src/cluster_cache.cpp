#include "cluster_cache.hpp"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <functional>
#include <mutex>
#include <optional>
#include <random>

#include "mdadmit/rules/json_input.hpp"

namespace mdadmit::server {

namespace asio = boost::asio;
namespace json = boost::json;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
// ModelDeployments at the version this project's CRD stores; InstanceTypes at the operator's.
constexpr std::string_view deployments_api = "/apis/worker.gpustack.ai/v1";
constexpr std::string_view instance_types_api = "/apis/worker.gpustack.ai/v1alpha1";
// Idle connections kept for the GETs of cache misses.
constexpr std::size_t idle_connections_kept = 4;
// A list can be large: it gets a minute.
constexpr std::chrono::seconds list_timeout{60};

std::string key_of(const json::value& object) {
    return rules::string_at(object, "/metadata/namespace") + "/" +
           rules::string_at(object, "/metadata/name");
}

// The API server's reason for an error status, from its Status body when it sent one.
std::string api_error(const KubeResponse& response) {
    if (response.status == 0) {
        return response.error;
    }
    boost::system::error_code ec;
    const auto status = json::parse(response.body, ec);
    const std::string message = ec ? std::string() : rules::string_at(status, "/message");
    return "the API server answered " + std::to_string(response.status) +
           (message.empty() ? "" : ": " + message);
}

Lookup lookup_of(const KubeResponse& response) {
    if (response.status == 404) {
        return {Lookup::Status::not_found, nullptr, {}};
    }
    if (response.status != 200) {
        return {Lookup::Status::unreadable, nullptr, api_error(response)};
    }
    boost::system::error_code ec;
    auto object = json::parse(response.body, ec);
    if (ec) {
        return {Lookup::Status::unreadable, nullptr, "the API server sent invalid JSON"};
    }
    return {Lookup::Status::found, std::make_shared<const json::value>(std::move(object)), {}};
}

// A name from a Pod's labels or a review: a path segment, never a path.
bool is_segment(std::string_view name) {
    return !name.empty() && name.find_first_of("/?#%") == std::string_view::npos;
}

}  // namespace

// One kind the cache lists and watches, and how its objects enter the cache.
struct ClusterCache::Resource {
    std::string kind;       // for logs and metrics
    std::string list_path;  // the collection, across namespaces
    std::function<void(const std::vector<json::value>&)> replace;
    std::function<void(std::string_view type, const json::value& object)> apply;
    bool synced = false;
};

// A GET of a missing object that lookups wait on together.
struct ClusterCache::Flight {
    std::optional<Lookup> result;
    std::vector<asio::steady_timer*> waiters;
};

ClusterCache::ClusterCache(asio::any_io_executor executor, std::shared_ptr<const KubeApi> api,
                           std::shared_ptr<InstanceTypeStore> instance_types, Readiness& readiness,
                           Metrics& metrics, const Log& log, CacheSettings settings)
    : executor_(std::move(executor)),
      api_(std::move(api)),
      instance_types_(std::move(instance_types)),
      readiness_(readiness),
      metrics_(metrics),
      log_(log),
      settings_(settings) {
    resources_.push_back(std::make_unique<Resource>(
        Resource{"ModelDeployment", std::string(deployments_api) + "/modeldeployments",
                 [this](const auto& items) { replace_deployments(items); },
                 [this](std::string_view type, const json::value& object) {
                     apply_deployment(type, object);
                 },
                 false}));
    if (instance_types_ != nullptr) {
        resources_.push_back(std::make_unique<Resource>(
            Resource{"InstanceType", std::string(instance_types_api) + "/instancetypes",
                     [this](const auto& items) { replace_instance_types(items); },
                     [this](std::string_view type, const json::value& object) {
                         apply_instance_type(type, object);
                     },
                     false}));
    }
    readiness_.cluster_synced = false;
    for (const auto& resource : resources_) {
        metrics_.set_cache_synced(resource->kind, false);
    }
}

ClusterCache::~ClusterCache() = default;

void ClusterCache::start() {
    for (const auto& resource : resources_) {
        asio::co_spawn(executor_, inform(*resource), asio::detached);
    }
}

std::vector<std::shared_ptr<const json::value>> ClusterCache::model_deployments() const {
    std::vector<std::shared_ptr<const json::value>> out;
    const std::shared_lock lock(mutex_);
    out.reserve(deployments_.size());
    for (const auto& [key, object] : deployments_) {
        out.push_back(object);
    }
    return out;
}

asio::awaitable<Lookup> ClusterCache::model_deployment(std::string namespace_name, std::string name,
                                                       Clock::time_point deadline) const {
    if (!is_segment(namespace_name) || !is_segment(name)) {
        co_return Lookup{Lookup::Status::not_found, nullptr, {}};
    }
    std::string key = namespace_name + "/" + name;
    {
        const std::shared_lock lock(mutex_);
        if (const auto it = deployments_.find(key); it != deployments_.end()) {
            co_return Lookup{Lookup::Status::found, it->second, {}};
        }
    }
    // Not (yet) in the cache: one GET, which concurrent lookups of the key share.
    std::string path = std::string(deployments_api) + "/namespaces/" + namespace_name +
                       "/modeldeployments/" + name;
    co_return co_await asio::co_spawn(
        executor_, fetch_shared(std::move(key), std::move(path), deadline), asio::use_awaitable);
}

asio::awaitable<Lookup> ClusterCache::fetch_shared(std::string key, std::string path,
                                                   Clock::time_point deadline) const {
    std::shared_ptr<Flight>& slot = flights_[key];
    if (!slot) {
        slot = std::make_shared<Flight>();
        asio::co_spawn(executor_, fetch(key, std::move(path), slot), asio::detached);
    }
    const std::shared_ptr<Flight> flight = slot;
    if (!flight->result) {
        asio::steady_timer timer(executor_, deadline);
        flight->waiters.push_back(&timer);
        co_await timer.async_wait(use_tuple);
        std::erase(flight->waiters, &timer);
    }
    if (flight->result) {
        co_return *flight->result;
    }
    co_return Lookup{Lookup::Status::unreadable, nullptr,
                     "no answer from the API server before the deadline"};
}

asio::awaitable<void> ClusterCache::fetch(std::string key, std::string path,
                                          std::shared_ptr<Flight> flight) const {
    std::unique_ptr<KubeConnection> connection;
    if (idle_connections_.empty()) {
        connection = std::make_unique<KubeConnection>(executor_, api_);
    } else {
        connection = std::move(idle_connections_.back());
        idle_connections_.pop_back();
    }
    const KubeResponse response =
        co_await connection->get(std::move(path), Clock::now() + settings_.fetch_timeout);
    if (response.status != 0 && idle_connections_.size() < idle_connections_kept) {
        idle_connections_.push_back(std::move(connection));
    }
    flight->result = lookup_of(response);
    for (auto* waiter : flight->waiters) {
        waiter->cancel();
    }
    if (const auto it = flights_.find(key); it != flights_.end() && it->second == flight) {
        flights_.erase(it);
    }
}

asio::awaitable<void> ClusterCache::backoff(std::chrono::milliseconds& wait) {
    thread_local std::minstd_rand random{std::random_device{}()};
    // Jitter of a fifth either way, so that replicas restarted together do not retry together.
    std::uniform_real_distribution<double> jitter(0.8, 1.2);
    asio::steady_timer timer(executor_,
                             std::chrono::duration_cast<Clock::duration>(wait * jitter(random)));
    co_await timer.async_wait(use_tuple);
    wait = std::min(wait * 2, settings_.backoff_max);
}

asio::awaitable<void> ClusterCache::inform(Resource& resource) {
    KubeConnection connection(executor_, api_);
    std::chrono::milliseconds wait = settings_.backoff_initial;
    std::string version;  // empty: list before watching
    for (;;) {
        if (version.empty()) {
            const KubeResponse listed =
                co_await connection.get(resource.list_path, Clock::now() + list_timeout);
            boost::system::error_code ec;
            const json::value list =
                listed.status == 200 ? json::parse(listed.body, ec) : json::value();
            const json::value* items = ec ? nullptr : rules::at_pointer(list, "/items");
            if (listed.status != 200 || items == nullptr || !items->is_array()) {
                log_.write(LogLevel::warn, "cluster cache: listing failed",
                           {{"kind", resource.kind},
                            {"error", listed.status != 200 ? api_error(listed)
                                                           : "the API server sent no list"}});
                co_await backoff(wait);
                continue;
            }
            resource.replace(
                std::vector<json::value>(items->get_array().begin(), items->get_array().end()));
            version = rules::string_at(list, "/metadata/resourceVersion");
            metrics_.count_cache_update(resource.kind, "list");
            synced(resource);
            wait = settings_.backoff_initial;
        }
        const std::string watch =
            resource.list_path + "?watch=1&allowWatchBookmarks=true&resourceVersion=" + version +
            "&timeoutSeconds=" + std::to_string(settings_.watch_timeout.count());
        const auto opened = Clock::now();
        const KubeResponse stream = co_await connection.open_stream(watch, opened + list_timeout);
        if (stream.status == 410) {
            version.clear();  // the history is gone: list again
            continue;
        }
        if (stream.status != 200) {
            log_.write(LogLevel::warn, "cluster cache: watch failed",
                       {{"kind", resource.kind}, {"error", api_error(stream)}});
            co_await backoff(wait);
            continue;
        }
        bool expired = false;
        bool applied = false;
        const auto idle = std::chrono::duration_cast<std::chrono::milliseconds>(
            settings_.watch_timeout + std::chrono::seconds(30));
        for (;;) {
            const std::optional<std::string> line = co_await connection.next_line(idle);
            if (!line) {
                break;
            }
            boost::system::error_code ec;
            const json::value event = json::parse(*line, ec);
            const json::value* object = ec ? nullptr : rules::at_pointer(event, "/object");
            if (object == nullptr) {
                continue;
            }
            const std::string type = rules::string_at(event, "/type");
            if (type == "ERROR") {
                // A Status: 410 means the version is too old to resume from.
                const json::value* code = rules::at_pointer(*object, "/code");
                expired = code != nullptr && code->is_int64() && code->get_int64() == 410;
                break;
            }
            if (std::string seen = rules::string_at(*object, "/metadata/resourceVersion");
                !seen.empty()) {
                version = std::move(seen);
            }
            if (type != "BOOKMARK") {
                resource.apply(type, *object);
                metrics_.count_cache_update(resource.kind, type);
                applied = true;
            }
        }
        if (expired) {
            version.clear();
            continue;
        }
        // A watch the server ended on time resumes at once; one that broke at the start
        // waits, so that a failing API server is not called in a loop.
        if (applied || Clock::now() - opened > std::chrono::seconds(1)) {
            wait = settings_.backoff_initial;
        } else {
            co_await backoff(wait);
        }
    }
}

void ClusterCache::replace_deployments(const std::vector<json::value>& items) {
    std::unordered_map<std::string, std::shared_ptr<const json::value>> next;
    for (const auto& item : items) {
        next[key_of(item)] = std::make_shared<const json::value>(item);
    }
    const std::unique_lock lock(mutex_);
    deployments_.swap(next);
}

void ClusterCache::apply_deployment(std::string_view type, const json::value& object) {
    std::string key = key_of(object);
    auto shared = type == "DELETED" ? nullptr : std::make_shared<const json::value>(object);
    const std::unique_lock lock(mutex_);
    if (shared) {
        deployments_[std::move(key)] = std::move(shared);
    } else {
        deployments_.erase(key);
    }
}

void ClusterCache::replace_instance_types(const std::vector<json::value>& items) {
    types_.clear();
    for (const auto& item : items) {
        if (auto named = rules::decode_instance_type(item)) {
            types_[named->name] = std::move(named->type);
        }
    }
    instance_types_->replace(rules::InstanceTypes(types_.begin(), types_.end()));
}

void ClusterCache::apply_instance_type(std::string_view type, const json::value& object) {
    auto named = rules::decode_instance_type(object);
    if (!named) {
        return;
    }
    if (type == "DELETED") {
        types_.erase(named->name);
    } else {
        types_[named->name] = std::move(named->type);
    }
    // Requests judge with whole snapshots; InstanceTypes change rarely.
    instance_types_->replace(rules::InstanceTypes(types_.begin(), types_.end()));
}

void ClusterCache::synced(Resource& resource) {
    metrics_.set_cache_synced(resource.kind, true);
    if (resource.synced) {
        return;
    }
    resource.synced = true;
    log_.write(LogLevel::info, "cluster cache synced", {{"kind", resource.kind}});
    if (std::all_of(resources_.begin(), resources_.end(),
                    [](const auto& r) { return r->synced; })) {
        readiness_.cluster_synced = true;
    }
}

}  // namespace mdadmit::server
