#include "cluster_view.hpp"

#include "mdadmit/inputs/documents.hpp"
#include "mdadmit/rules/json_input.hpp"

namespace mdadmit::server {

rules::Result<FileClusterView> FileClusterView::load(const std::string& path) {
    auto documents = inputs::read_inputs({path});
    if (!documents) {
        return documents.error();
    }
    FileClusterView view;
    for (auto& document : documents.value()) {
        if (inputs::kind_of(document.value) != "ModelDeployment") {
            continue;
        }
        std::string key = rules::string_at(document.value, "/metadata/namespace") + "/" +
                          rules::string_at(document.value, "/metadata/name");
        view.deployments_[std::move(key)] =
            std::make_shared<const boost::json::value>(std::move(document.value));
    }
    return view;
}

boost::asio::awaitable<Lookup> FileClusterView::model_deployment(
    std::string namespace_name, std::string name, std::chrono::steady_clock::time_point) const {
    const auto it = deployments_.find(namespace_name + "/" + name);
    if (it == deployments_.end()) {
        co_return Lookup{Lookup::Status::not_found, {}, {}};
    }
    co_return Lookup{Lookup::Status::found, it->second, {}};
}

std::vector<std::shared_ptr<const boost::json::value>> FileClusterView::model_deployments() const {
    std::vector<std::shared_ptr<const boost::json::value>> out;
    for (const auto& [key, object] : deployments_) {
        out.push_back(object);
    }
    return out;
}

}  // namespace mdadmit::server
