#pragma once

#include <boost/json/value.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "mdadmit/admission/admission.hpp"
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
    // Every ModelDeployment held now, for the periodic audit.
    virtual std::vector<std::shared_ptr<const boost::json::value>> model_deployments() const = 0;
};

// ModelDeployments read from manifest files (a file or a mounted directory) at start-up:
// for the harness, and for clusters that do not grant the webhook API reads.
class FileClusterView : public ClusterView {
  public:
    static rules::Result<FileClusterView> load(const std::string& path);

    boost::asio::awaitable<Lookup> model_deployment(
        std::string namespace_name, std::string name,
        std::chrono::steady_clock::time_point deadline) const override;
    std::vector<std::shared_ptr<const boost::json::value>> model_deployments() const override;

  private:
    // "namespace/name" -> the object
    std::map<std::string, std::shared_ptr<const boost::json::value>, std::less<>> deployments_;
};

}  // namespace mdadmit::server
