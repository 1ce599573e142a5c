#include "fake_cluster.hpp"

#include <unistd.h>

#include <gtest/gtest.h>
#include <boost/json.hpp>
#include <fstream>
#include <sstream>

#include "test_certificates.hpp"

namespace mdadmit::test {

namespace json = boost::json;

FakeCluster::FakeCluster()
    : token_file(testing::TempDir() + "/mdadmit-kube-token-" + std::to_string(::getpid()) + "-" +
                 std::to_string(reinterpret_cast<std::uintptr_t>(this))) {
    write_file(token_file, "token-1\n");
}

void FakeCluster::connect(server::Config& config) const {
    config.kube_host = "127.0.0.1";
    config.kube_port = api.port();
    config.kube_ca_file = api.ca_file();
    config.kube_server_name = "localhost";
    config.kube_token_file = token_file;
}

void FakeCluster::store_test_deployments() {
    std::ifstream in(std::string(MDADMIT_SOURCE_DIR) + "/test/data/stored-modeldeployments.json");
    std::ostringstream text;
    text << in.rdbuf();
    const json::value stored = json::parse(text.str());
    for (const auto& item : stored.at("items").as_array()) {
        api.put(deployments_path, json::serialize(item));
    }
}

}  // namespace mdadmit::test
