#include "cluster_view.hpp"

#include "mdadmit/inputs/documents.hpp"
#include "mdadmit/rules/json_input.hpp"

namespace mdadmit::server {

std::string_view to_string(Lookup::Status status) {
    switch (status) {
        case Lookup::Status::found:
            return "found";
        case Lookup::Status::not_found:
            return "not_found";
        case Lookup::Status::unreadable:
            break;
    }
    return "error";
}

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
        view.deployments_[std::move(key)] = std::move(document.value);
    }
    return view;
}

Lookup FileClusterView::model_deployment(std::string_view namespace_name, std::string_view name,
                                         std::chrono::steady_clock::time_point) const {
    const auto it = deployments_.find(std::string(namespace_name) + "/" + std::string(name));
    if (it == deployments_.end()) {
        return {Lookup::Status::not_found, {}, {}};
    }
    return {Lookup::Status::found, it->second, {}};
}

}  // namespace mdadmit::server
