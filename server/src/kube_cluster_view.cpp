// KubeClusterView: ModelDeployments and InstanceTypes read from the Kubernetes API.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>

#include "cluster_view.hpp"
#include "mdadmit/rules/json_input.hpp"

namespace mdadmit::server {

namespace {

// The API server's reason for an error status, from its Status body when it sent one.
std::string api_error(const KubeResponse& response) {
    if (response.status == 0) {
        return response.error;
    }
    boost::system::error_code ec;
    const auto status = boost::json::parse(response.body, ec);
    const std::string message = ec ? std::string() : rules::string_at(status, "/message");
    return "the API server answered " + std::to_string(response.status) +
           (message.empty() ? "" : ": " + message);
}

}  // namespace

KubeClusterView::KubeClusterView(std::shared_ptr<const KubeClient> client,
                                 std::chrono::milliseconds cache_ttl)
    : client_(std::move(client)), cache_ttl_(cache_ttl) {}

KubeClusterView::~KubeClusterView() {
    blocking_.join();
}

boost::asio::awaitable<Lookup> KubeClusterView::model_deployment(
    std::string namespace_name, std::string name,
    std::chrono::steady_clock::time_point deadline) const {
    // A coroutine function, not a capturing lambda: its parameters live in its own frame.
    co_return co_await boost::asio::co_spawn(
        blocking_, read_on_pool(std::move(namespace_name), std::move(name), deadline),
        boost::asio::use_awaitable);
}

boost::asio::awaitable<Lookup> KubeClusterView::read_on_pool(
    std::string namespace_name, std::string name,
    std::chrono::steady_clock::time_point deadline) const {
    co_return read(namespace_name, name, deadline);
}

Lookup KubeClusterView::read(const std::string& namespace_name, const std::string& name,
                             std::chrono::steady_clock::time_point deadline) const {
    const std::string key = namespace_name + "/" + name;
    const auto now = std::chrono::steady_clock::now();
    {
        const std::lock_guard lock(mutex_);
        const auto it = cache_.find(key);
        if (it != cache_.end() && now - it->second.fetched < cache_ttl_) {
            return it->second.lookup;
        }
    }
    const auto response = client_->get(
        "/apis/worker.gpustack.ai/v1/namespaces/" + namespace_name + "/modeldeployments/" + name,
        deadline);
    Lookup lookup;
    if (response.status == 200) {
        boost::system::error_code ec;
        lookup.object = boost::json::parse(response.body, ec);
        lookup.status = ec ? Lookup::Status::unreadable : Lookup::Status::found;
        lookup.error = ec ? "the API server sent invalid JSON" : "";
    } else if (response.status == 404) {
        lookup.status = Lookup::Status::not_found;
    } else {
        lookup.status = Lookup::Status::unreadable;
        lookup.error = api_error(response);
    }
    // Only an object is kept: a missing one may be created any moment, an error may pass.
    if (lookup.status == Lookup::Status::found) {
        const std::lock_guard lock(mutex_);
        cache_[key] = {lookup, now};
    }
    return lookup;
}

rules::Result<rules::InstanceTypes> KubeClusterView::instance_types(
    std::chrono::steady_clock::time_point deadline) const {
    const auto response = client_->get("/apis/worker.gpustack.ai/v1alpha1/instancetypes", deadline);
    if (response.status != 200) {
        return rules::Error{"listing InstanceTypes: " + api_error(response)};
    }
    boost::system::error_code ec;
    const auto list = boost::json::parse(response.body, ec);
    const auto* items = ec                 ? nullptr
                        : list.is_object() ? list.get_object().if_contains("items")
                                           : nullptr;
    if (items == nullptr || !items->is_array()) {
        return rules::Error{"listing InstanceTypes: the API server sent no list"};
    }
    rules::InstanceTypes out;
    for (const auto& item : items->get_array()) {
        if (auto named = rules::decode_instance_type(item)) {
            out[named->name] = std::move(named->type);
        }
    }
    return out;
}

}  // namespace mdadmit::server
