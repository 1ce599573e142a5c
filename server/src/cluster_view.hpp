#pragma once

#include <boost/json/value.hpp>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "mdadmit/rules/result.hpp"

namespace mdadmit::server {

// What the mutating path reads of the cluster: a Pod's ModelDeployment.
class ClusterView {
  public:
    virtual ~ClusterView() = default;
    // nullopt when the object is not known.
    virtual std::optional<boost::json::value> model_deployment(std::string_view namespace_name,
                                                               std::string_view name) const = 0;
};

// ModelDeployments read from manifest files (a file or a mounted directory) at start-up:
// for the harness, and for clusters that do not grant the webhook API reads.
class FileClusterView : public ClusterView {
  public:
    static rules::Result<FileClusterView> load(const std::string& path);

    std::optional<boost::json::value> model_deployment(std::string_view namespace_name,
                                                       std::string_view name) const override;
    std::size_t size() const { return deployments_.size(); }

  private:
    std::map<std::string, boost::json::value, std::less<>> deployments_;  // "namespace/name"
};

}  // namespace mdadmit::server
