// A Pod storm against the webhook binary: many Pods of many ModelDeployments created at once,
// as a rollout or a node drain does, while the Kubernetes API server answers slowly. It
// counts which Pods got the candidate label they should have, what the API server was asked,
// and the latency of the mutating path, for any build of mdadmit-webhook (so a previous
// design can be run the same way).
//
//   mdadmit_pod_storm --webhook build/server/mdadmit-webhook [--deployments 50] [--pods 1000]
//                     [--concurrency 64] [--api-delay-ms 250]
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fake_kube_api.hpp"
#include "https_client.hpp"
#include "test_certificates.hpp"

namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using Clock = std::chrono::steady_clock;
using mdadmit::test::FakeKubeApi;

const std::string deployments_path = "/apis/worker.gpustack.ai/v1/modeldeployments";
const std::string instance_types_path = "/apis/worker.gpustack.ai/v1alpha1/instancetypes";
const std::string storm_namespace = "storm";

struct Options {
    std::string webhook;
    int deployments = 50;
    int pods = 1000;
    int concurrency = 64;
    int api_delay_ms = 250;
};

// A vLLM Server role of two-member replicas with internal data parallelism: member 0 of each
// replica is a router candidate, member 1 is not. Half the storm should be labelled.
std::string deployment(int index) {
    return json::serialize(json::object{
        {"apiVersion", "worker.gpustack.ai/v1"},
        {"kind", "ModelDeployment"},
        {"metadata", {{"name", "chat-" + std::to_string(index)}, {"namespace", storm_namespace}}},
        {"spec",
         {{"model", {{"name", "m"}}},
          {"engine", {{"name", "vLLM"}, {"version", "0.11.0"}}},
          {"router", {{"name", "vllm-router"}}},
          {"roles",
           json::array{json::object{{"name", "serve"},
                                    {"replicas", 10},
                                    {"size", 2},
                                    {"extraArgs", json::array{"--data-parallel-size", "2"}}}}}}}});
}

std::string pod_review(int pod, int deployment_index, int member) {
    return json::serialize(json::object{
        {"apiVersion", "admission.k8s.io/v1"},
        {"kind", "AdmissionReview"},
        {"request",
         {{"uid", "pod-" + std::to_string(pod)},
          {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
          {"operation", "CREATE"},
          {"namespace", storm_namespace},
          {"object",
           {{"metadata",
             {{"labels",
               {{"app.kubernetes.io/name", "model-deployment"},
                {"app.kubernetes.io/instance", "chat-" + std::to_string(deployment_index)},
                {"app.kubernetes.io/component", "serve"},
                {"modeldeployment.gpustack.ai/member-index", std::to_string(member)}}}}},
            {"spec", {{"containers", json::array{json::object{{"name", "engine"}}}}}}}}}}});
}

unsigned short free_port() {
    asio::io_context io;
    asio::ip::tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
    return acceptor.local_endpoint().port();
}

pid_t spawn(const std::vector<std::string>& arguments) {
    std::vector<char*> argv;
    for (const auto& argument : arguments) {
        argv.push_back(const_cast<char*>(argument.c_str()));
    }
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) {
        throw std::runtime_error("cannot start " + arguments[0]);
    }
    return pid;
}

// /readyz of the health port; 0 while nothing listens there yet.
int readiness(unsigned short health) {
    try {
        return mdadmit::test::plain_get(health, "/readyz").first;
    } catch (const std::exception&) {
        return 0;
    }
}

double percentile(std::vector<double> values, double p) {
    if (values.empty()) {
        return 0;
    }
    std::sort(values.begin(), values.end());
    const auto at = static_cast<std::size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
    return values[std::min(at, values.size() - 1)];
}

// The upper bound of the histogram bucket holding the p-th quantile of the server's own
// /mutate latency (mdadmit_request_duration_seconds), in milliseconds.
std::string server_quantile(const std::string& metrics, double p) {
    std::vector<std::pair<double, double>> buckets;  // le, cumulative count
    std::istringstream lines(metrics);
    const std::string prefix = "mdadmit_request_duration_seconds_bucket{path=\"/mutate\",le=\"";
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind(prefix, 0) != 0) {
            continue;
        }
        const std::string le =
            line.substr(prefix.size(), line.find('"', prefix.size()) - prefix.size());
        const double count = std::stod(line.substr(line.rfind(' ') + 1));
        buckets.emplace_back(le == "+Inf" ? 1e9 : std::stod(le), count);
    }
    if (buckets.empty() || buckets.back().second == 0) {
        return "n/a";
    }
    const double wanted = p * buckets.back().second;
    for (const auto& [le, count] : buckets) {
        if (count >= wanted) {
            return le >= 1e9 ? "> 30000" : "<= " + std::to_string(le * 1000).substr(0, 5);
        }
    }
    return "n/a";
}

Options parse(int argc, char** argv) {
    Options options;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string name = argv[i];
        const std::string value = argv[i + 1];
        if (name == "--webhook") {
            options.webhook = value;
        } else if (name == "--deployments") {
            options.deployments = std::stoi(value);
        } else if (name == "--pods") {
            options.pods = std::stoi(value);
        } else if (name == "--concurrency") {
            options.concurrency = std::stoi(value);
        } else if (name == "--api-delay-ms") {
            options.api_delay_ms = std::stoi(value);
        } else {
            throw std::runtime_error("unknown option " + name);
        }
    }
    if (options.webhook.empty()) {
        throw std::runtime_error(
            "usage: mdadmit_pod_storm --webhook PATH [--deployments N] [--pods N] "
            "[--concurrency N] [--api-delay-ms N]");
    }
    return options;
}

struct Result {
    int expected = 0;  // Pods that should get the candidate label
    int patched = 0;   // of those, Pods that got a patch
    int wrongly_patched = 0;
    int warned = 0;  // answers carrying a warning (the object could not be read)
    int failed = 0;  // no 200 answer
    std::vector<double> latencies_ms;
};

Result storm(const Options& options, unsigned short port, const mdadmit::test::ClientOptions& tls) {
    Result result;
    std::atomic<int> next{0};
    std::mutex mutex;
    std::vector<std::thread> clients;
    for (int c = 0; c < options.concurrency; ++c) {
        clients.emplace_back([&] {
            mdadmit::test::HttpsClient client(port, tls);
            const bool connected = client.connect();
            Result mine;
            for (int pod = next++; pod < options.pods; pod = next++) {
                const int deployment_index = pod % options.deployments;
                const int member = (pod / options.deployments) % 2;
                const bool candidate = member == 0;
                mine.expected += candidate ? 1 : 0;
                const auto started = Clock::now();
                const auto response =
                    connected ? client.request("POST", "/mutate?timeout=2s",
                                               pod_review(pod, deployment_index, member))
                              : mdadmit::test::ClientResponse{};
                mine.latencies_ms.push_back(
                    std::chrono::duration<double, std::milli>(Clock::now() - started).count());
                if (response.status != 200) {
                    ++mine.failed;
                    continue;
                }
                const json::value review = json::parse(response.body);
                const json::object& answer = review.at("response").as_object();
                const bool patched = answer.contains("patch");
                mine.patched += candidate && patched ? 1 : 0;
                mine.wrongly_patched += !candidate && patched ? 1 : 0;
                mine.warned += answer.contains("warnings") ? 1 : 0;
            }
            const std::lock_guard lock(mutex);
            result.expected += mine.expected;
            result.patched += mine.patched;
            result.wrongly_patched += mine.wrongly_patched;
            result.warned += mine.warned;
            result.failed += mine.failed;
            result.latencies_ms.insert(result.latencies_ms.end(), mine.latencies_ms.begin(),
                                       mine.latencies_ms.end());
        });
    }
    for (auto& client : clients) {
        client.join();
    }
    return result;
}

int run(const Options& options) {
    namespace fs = std::filesystem;
    const fs::path directory =
        fs::temp_directory_path() / ("mdadmit-pod-storm-" + std::to_string(::getpid()));
    fs::create_directories(directory);
    const std::string token = "storm-token";
    mdadmit::test::write_file(directory / "token", token + "\n");
    mdadmit::test::TestCa ca("pod storm CA");
    const auto serving = ca.issue("localhost");
    mdadmit::test::write_file(directory / "ca.crt", ca.pem().certificate);
    mdadmit::test::write_file(directory / "tls.crt", serving.certificate);
    mdadmit::test::write_file(directory / "tls.key", serving.key);

    FakeKubeApi api(token);
    for (int i = 0; i < options.deployments; ++i) {
        api.put(deployments_path, deployment(i));
    }
    api.set_delay(std::chrono::milliseconds(options.api_delay_ms));

    const unsigned short port = free_port();
    const unsigned short health = free_port();
    const auto started = Clock::now();
    const pid_t webhook = spawn({options.webhook,
                                 "--cert-file",
                                 directory / "tls.crt",
                                 "--key-file",
                                 directory / "tls.key",
                                 "--listen",
                                 "127.0.0.1:" + std::to_string(port),
                                 "--health-listen",
                                 "127.0.0.1:" + std::to_string(health),
                                 "--threads",
                                 "2",
                                 "--kube-api-server",
                                 "127.0.0.1:" + std::to_string(api.port()),
                                 "--kube-ca-file",
                                 api.ca_file(),
                                 "--kube-server-name",
                                 "localhost",
                                 "--kube-token-file",
                                 directory / "token",
                                 "--log-level",
                                 "error"});
    bool ready = false;
    while (!ready && Clock::now() - started < std::chrono::seconds(30)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        ready = readiness(health) == 200;
    }
    const double ready_ms =
        std::chrono::duration<double, std::milli>(Clock::now() - started).count();
    const int gets_before = api.gets();

    mdadmit::test::ClientOptions tls;
    tls.ca_file = directory / "ca.crt";
    const auto storm_started = Clock::now();
    const Result result = ready ? storm(options, port, tls) : Result{};
    const double storm_s = std::chrono::duration<double>(Clock::now() - storm_started).count();
    const std::string metrics = mdadmit::test::plain_get(health, "/metrics").second;

    ::kill(webhook, SIGKILL);
    ::waitpid(webhook, nullptr, 0);
    std::error_code ignored;
    fs::remove_all(directory, ignored);

    std::printf("webhook: %s\n", options.webhook.c_str());
    std::printf("storm: %d Pods of %d ModelDeployments, %d at a time, API latency %d ms\n",
                options.pods, options.deployments, options.concurrency, options.api_delay_ms);
    if (!ready) {
        std::printf("the webhook did not become ready within 30 s\n");
        return 1;
    }
    std::printf("ready after: %.0f ms\n", ready_ms);
    std::printf("labelled: %d of %d that should be (wrongly patched: %d, warned: %d, failed: %d)\n",
                result.patched, result.expected, result.wrongly_patched, result.warned,
                result.failed);
    std::printf(
        "API requests: LIST ModelDeployment %d, WATCH ModelDeployment %d, LIST "
        "InstanceType %d, WATCH InstanceType %d, GET %d (%d during the storm)\n",
        api.lists(deployments_path), api.watches(deployments_path), api.lists(instance_types_path),
        api.watches(instance_types_path), api.gets(), api.gets() - gets_before);
    std::printf("client latency ms: p50 %.2f, p99 %.2f, max %.2f; storm took %.2f s\n",
                percentile(result.latencies_ms, 0.50), percentile(result.latencies_ms, 0.99),
                percentile(result.latencies_ms, 1.0), storm_s);
    std::printf("server /mutate latency ms (histogram bucket): p50 %s, p99 %s\n",
                server_quantile(metrics, 0.50).c_str(), server_quantile(metrics, 0.99).c_str());
    // The target: every Pod labelled as it should be, from the cache (no GET while Pods wait).
    const bool met = result.patched == result.expected && result.wrongly_patched == 0 &&
                     api.gets() == gets_before;
    return met ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(parse(argc, argv));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "mdadmit_pod_storm: %s\n", e.what());
        return 2;
    }
}
