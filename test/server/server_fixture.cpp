#include "server_fixture.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

namespace mdadmit::test {

namespace fs = std::filesystem;

const std::string denied_object =
    R"({"apiVersion": "worker.gpustack.ai/v1", "kind": "ModelDeployment",
    "metadata": {"name": "md", "namespace": "ns"},
    "spec": {"model": {"name": "m"}, "engine": {"name": "vLLM", "version": "0.29.0"},
             "router": {"name": "vllm-router", "extraArgs": ["--policy=round-robin"]}, "roles": [{"name": "a"}]}})";

const std::string admitted_object =
    R"({"apiVersion": "worker.gpustack.ai/v1", "kind": "ModelDeployment",
    "metadata": {"name": "md", "namespace": "ns"},
    "spec": {"model": {"name": "m"}, "engine": {"name": "vLLM", "version": "0.29.0"}, "roles": [{"name": "a"}]}})";

std::string validate_review(const std::string& object_json, const std::string& uid,
                            const std::string& api_version) {
    return R"({"apiVersion": ")" + api_version +
           R"(", "kind": "AdmissionReview", "request": {"uid": ")" + uid +
           R"(", "kind": {"group": "worker.gpustack.ai", "version": "v1", "kind": "ModelDeployment"},
           "operation": "CREATE", "namespace": "ns", "object": )" +
           object_json + "}}";
}

ServerFixture::ServerFixture(const std::function<void(server::Config&)>& adjust) {
    directory_ = fs::path(testing::TempDir()) /
                 ("mdadmit-server-" + std::to_string(::getpid()) + "-" +
                  std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
    fs::create_directories(directory_);
    write_file(directory_ / "ca.crt", ca_.pem().certificate);
    swap_certificate(ca_.issue("server-1"));
    fs::create_symlink("..data/tls.crt", directory_ / "tls.crt");
    fs::create_symlink("..data/tls.key", directory_ / "tls.key");

    config_.listen = {"127.0.0.1", 0};
    config_.health_listen = server::ListenAddress{"127.0.0.1", 0};
    config_.cert_file = directory_ / "tls.crt";
    config_.key_file = directory_ / "tls.key";
    config_.threads = 2;
    config_.shutdown_delay = std::chrono::milliseconds(200);
    config_.drain_timeout = std::chrono::seconds(5);
    config_.cert_poll_interval = std::chrono::milliseconds(500);
    if (adjust) {
        adjust(config_);
    }
    auto webhook = server::Webhook::create(config_, log_);
    if (!webhook) {
        throw std::runtime_error(webhook.error().message);
    }
    webhook_ = std::move(webhook).value();
    auto started = webhook_->start();
    if (!started) {
        throw std::runtime_error(started.error().message);
    }
}

ServerFixture::~ServerFixture() {
    webhook_.reset();
    std::error_code ignored;
    fs::remove_all(directory_, ignored);
}

ClientOptions ServerFixture::client_options() const {
    ClientOptions options;
    options.ca_file = directory_ / "ca.crt";
    return options;
}

void ServerFixture::swap_certificate(const PemPair& pair) {
    const std::string version = "..v" + std::to_string(++version_);
    fs::create_directories(directory_ / version);
    write_file(directory_ / version / "tls.crt", pair.certificate);
    write_file(directory_ / version / "tls.key", pair.key);
    fs::create_symlink(version, directory_ / "..data_tmp");
    fs::rename(directory_ / "..data_tmp", directory_ / "..data");
}

bool ServerFixture::wait_for_metric(const std::string& line, std::chrono::milliseconds timeout) {
    const auto give_up = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < give_up) {
        if (webhook_->metrics().exposition().find(line) != std::string::npos) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
}

}  // namespace mdadmit::test
