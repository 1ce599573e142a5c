#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "config.hpp"
#include "https_client.hpp"
#include "log.hpp"
#include "test_certificates.hpp"
#include "webhook.hpp"

namespace mdadmit::test {

// A real server on ephemeral loopback ports, its certificate laid out the way a Kubernetes
// Secret volume lays it out (files behind a `..data` symlink), and clients that trust it.
class ServerFixture {
  public:
    explicit ServerFixture(const std::function<void(server::Config&)>& adjust = {});
    ~ServerFixture();

    unsigned short port() const { return webhook_->server().tls_port(); }
    unsigned short health_port() const { return *webhook_->server().health_port(); }
    server::Server& server() { return webhook_->server(); }
    server::Metrics& metrics() { return webhook_->metrics(); }
    ClientOptions client_options() const;
    const TestCa& ca() const { return ca_; }
    const std::filesystem::path& directory() const { return directory_; }

    // Publishes a new certificate and key the way the kubelet updates a Secret volume:
    // a new timestamped directory, then an atomic rename of the `..data` symlink.
    void swap_certificate(const PemPair& pair);
    // Waits until a metric line is present in the exposition; false on timeout.
    bool wait_for_metric(const std::string& line,
                         std::chrono::milliseconds timeout = std::chrono::seconds(10));

  private:
    std::filesystem::path directory_;
    TestCa ca_;
    int version_ = 0;
    server::Config config_;
    server::Log log_{"warn", false};
    std::unique_ptr<server::Webhook> webhook_;
};

// A review of `object_json` for /validate.
std::string validate_review(const std::string& object_json, const std::string& uid = "uid-1",
                            const std::string& api_version = "admission.k8s.io/v1");
// A ModelDeployment refused by router-policy-value.
extern const std::string denied_object;
// A ModelDeployment admitted without findings.
extern const std::string admitted_object;

}  // namespace mdadmit::test
