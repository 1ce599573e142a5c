#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "mdadmit/rules/result.hpp"

namespace boost::asio::ssl {
class context;
}

namespace mdadmit::server {

// How to reach the Kubernetes API: in a Pod, from the service account the kubelet mounts.
struct KubeSettings {
    std::string host;  // KUBERNETES_SERVICE_HOST
    unsigned short port = 443;
    std::string token_file = "/var/run/secrets/kubernetes.io/serviceaccount/token";
    std::string ca_file = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
    std::string server_name;  // checked against the API server's certificate; default: host
};

struct KubeResponse {
    int status = 0;  // HTTP status; 0 when no answer came
    std::string body;
    std::string error;  // why no answer came
};

// A small blocking HTTPS client for GETs against the API server, bounded by a deadline.
// The bearer token is read from its file on every request, so a rotated token is used as
// soon as the kubelet writes it. Thread-safe: every call has its own connection.
class KubeClient {
  public:
    static rules::Result<std::unique_ptr<KubeClient>> create(KubeSettings settings);
    ~KubeClient();

    KubeResponse get(std::string_view path, std::chrono::steady_clock::time_point deadline) const;

  private:
    KubeClient(KubeSettings settings, std::unique_ptr<boost::asio::ssl::context> context);

    KubeSettings settings_;
    std::unique_ptr<boost::asio::ssl::context> context_;
};

}  // namespace mdadmit::server
