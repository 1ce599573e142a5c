#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "test_certificates.hpp"

namespace mdadmit::test {

// A stand-in for the Kubernetes API server on loopback: TLS with a certificate of its own
// CA, a bearer token check, and fixtures by path. It can be made slow.
class FakeKubeApi {
  public:
    explicit FakeKubeApi(std::string token);
    ~FakeKubeApi();

    unsigned short port() const { return port_; }
    const std::string& ca_file() const { return ca_file_; }
    void serve(const std::string& path, const std::string& json_body);
    void set_token(const std::string& token);
    void set_delay(std::chrono::milliseconds delay) { delay_ms_ = delay.count(); }
    int requests(const std::string& path) const;

  private:
    void run();

    TestCa ca_{"fake API CA"};
    std::string ca_file_;
    std::string cert_file_;
    std::string key_file_;
    unsigned short port_ = 0;
    int listener_ = -1;
    std::atomic<bool> stopping_{false};
    std::atomic<long long> delay_ms_{0};
    mutable std::mutex mutex_;
    std::string token_;
    std::map<std::string, std::string> fixtures_;
    std::map<std::string, int> requests_;
    std::thread thread_;
};

}  // namespace mdadmit::test
