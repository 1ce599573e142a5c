#pragma once

#include <string>

#include "config.hpp"
#include "fake_kube_api.hpp"

namespace mdadmit::test {

inline const std::string deployments_path = "/apis/worker.gpustack.ai/v1/modeldeployments";

// A fake Kubernetes API server with the token file a webhook reads to reach it.
class FakeCluster {
  public:
    FakeCluster();

    // Points the webhook's settings at this API server.
    void connect(server::Config& config) const;
    // Stores the ModelDeployments of test/data/stored-modeldeployments.json (a List of three
    // in two namespaces: one admitted, one refused, one warned about).
    void store_test_deployments();

    FakeKubeApi api{"token-1"};
    const std::string token_file;
};

}  // namespace mdadmit::test
