// A Pod storm against the webhook binary: many Pods of many ModelDeployments created at once,
// as a rollout or a node drain does, while the Kubernetes API server answers slowly. It
// counts which Pods got the candidate label they should have, what the API server was asked,
// and the latency of the mutating path, for any build of mdadmit-webhook (so a previous
// design can be run the same way).
//
//   mdadmit_pod_storm --webhook build/server/mdadmit-webhook [--deployments 50] [--pods 1000]
//                     [--concurrency 64] [--api-delay-ms 250] [--webhook-threads 1]
//                     [--split-cpus on|off]
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_process.hpp"
#include "fake_kube_api.hpp"
#include "https_client.hpp"
#include "test_certificates.hpp"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
namespace json = boost::json;
using Clock = std::chrono::steady_clock;
using mdadmit::bench::percentile;
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
    int webhook_threads = 1;
    // on: the webhook gets a CPU of its own and the load generator (and fake API server) the
    // others, so the webhook's latency is not the scheduler's time slices on a small machine.
    bool split_cpus = true;
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

// The server's own /mutate latency histogram (mdadmit_request_duration_seconds): upper bound
// in seconds and cumulative count of each bucket.
std::vector<std::pair<double, double>> server_histogram(const std::string& metrics) {
    std::vector<std::pair<double, double>> buckets;
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
    return buckets;
}

std::string milliseconds(double seconds) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", seconds * 1000);
    return text;
}

// The upper bound of the bucket holding the p-th quantile, in milliseconds.
std::string server_quantile(const std::vector<std::pair<double, double>>& buckets, double p) {
    if (buckets.empty() || buckets.back().second == 0) {
        return "n/a";
    }
    const double wanted = p * buckets.back().second;
    for (const auto& [le, count] : buckets) {
        if (count >= wanted) {
            return le >= 1e9 ? "> 30000" : "<= " + milliseconds(le);
        }
    }
    return "n/a";
}

// Requests per bucket, for the buckets that hold any: "<= 0.1: 12, <= 0.25: 300, ...".
std::string server_distribution(const std::vector<std::pair<double, double>>& buckets) {
    std::string out;
    double below = 0;
    for (const auto& [le, count] : buckets) {
        if (count > below) {
            out += (out.empty() ? "" : ", ") +
                   (le >= 1e9 ? std::string("> 30000") : "<= " + milliseconds(le)) + ": " +
                   std::to_string(static_cast<long long>(count - below));
        }
        below = count;
    }
    return out;
}

Options parse(int argc, char** argv) {
    namespace bench = mdadmit::bench;
    Options options;
    bench::parse_flags(argc, argv,
                       {{"--webhook", bench::text_flag(options.webhook)},
                        {"--deployments", bench::integer_flag(options.deployments)},
                        {"--pods", bench::integer_flag(options.pods)},
                        {"--concurrency", bench::integer_flag(options.concurrency)},
                        {"--api-delay-ms", bench::integer_flag(options.api_delay_ms)},
                        {"--webhook-threads", bench::integer_flag(options.webhook_threads)},
                        {"--split-cpus", bench::on_off_flag(options.split_cpus)}});
    if (options.webhook.empty()) {
        throw std::runtime_error(
            "usage: mdadmit_pod_storm --webhook PATH [--deployments N] [--pods N] "
            "[--concurrency N] [--api-delay-ms N] [--webhook-threads N] [--split-cpus on|off]");
    }
    return options;
}

// Member 0 of each replica is a router candidate, member 1 is not (see deployment()).
bool is_candidate(int pod, const Options& options) {
    return (pod / options.deployments) % 2 == 0;
}

struct Result {
    int expected = 0;  // Pods that should get the candidate label
    int patched = 0;   // of those, Pods that got a patch
    int wrongly_patched = 0;
    int warned = 0;      // answers carrying a warning (the object could not be read)
    int answered = 0;    // Pods answered 200
    int failed = 0;      // Pods answered with another status
    int lost_lanes = 0;  // connections that could not be opened or broke
    std::vector<double> latencies_ms;
    double seconds = 0;  // from the last connection's handshake to the last answer
};

// The storm's shared state. Every lane runs on the one client thread, so nothing is locked.
struct Storm {
    explicit Storm(asio::io_context& io)
        : all_connected(io, asio::steady_timer::time_point::max()) {}

    std::vector<std::string> reviews;  // one per Pod, serialized before the clock starts
    std::size_t next = 0;
    int lanes_waiting = 0;
    Clock::time_point started;
    // Cancelled when every lane has its TLS connection, so that the storm measures Pod reviews
    // on open connections, as kube-apiserver keeps them, not the handshakes before them.
    asio::steady_timer all_connected;
    Result result;
};

// One of the storm's concurrent connections: it takes the next Pod until none is left. The
// client is one thread of coroutines, so the load generator takes little of the CPU the
// webhook needs on a small machine.
asio::awaitable<void> lane(Storm& storm, ssl::context& tls, unsigned short port,
                           const Options& options) {
    beast::ssl_stream<beast::tcp_stream> stream(co_await asio::this_coro::executor, tls);
    SSL_set_tlsext_host_name(stream.native_handle(), "localhost");
    stream.set_verify_callback(ssl::host_name_verification("localhost"));
    bool connected = true;
    try {
        co_await beast::get_lowest_layer(stream).async_connect(
            {asio::ip::make_address("127.0.0.1"), port}, asio::use_awaitable);
        // As kube-apiserver: Nagle's algorithm off.
        beast::get_lowest_layer(stream).socket().set_option(asio::ip::tcp::no_delay(true));
        co_await stream.async_handshake(ssl::stream_base::client, asio::use_awaitable);
    } catch (const std::exception&) {
        connected = false;
    }
    if (--storm.lanes_waiting == 0) {
        storm.started = Clock::now();
        storm.all_connected.cancel();
    } else if (connected) {
        boost::system::error_code cancelled;
        co_await storm.all_connected.async_wait(
            asio::redirect_error(asio::use_awaitable, cancelled));
    }
    if (!connected) {
        ++storm.result.lost_lanes;
        co_return;
    }
    beast::flat_buffer buffer;
    while (storm.next < storm.reviews.size()) {
        const int pod = static_cast<int>(storm.next++);
        const bool candidate = is_candidate(pod, options);
        http::request<http::string_body> request{http::verb::post, "/mutate?timeout=2s", 11};
        request.set(http::field::host, "localhost");
        request.set(http::field::content_type, "application/json");
        request.body() = storm.reviews[static_cast<std::size_t>(pod)];
        request.prepare_payload();
        http::response<http::string_body> response;
        const auto started = Clock::now();
        co_await http::async_write(stream, request, asio::use_awaitable);
        co_await http::async_read(stream, buffer, response, asio::use_awaitable);
        storm.result.latencies_ms.push_back(
            std::chrono::duration<double, std::milli>(Clock::now() - started).count());
        if (response.result_int() != 200) {
            ++storm.result.failed;
            continue;
        }
        ++storm.result.answered;
        const json::value review = json::parse(response.body());
        const json::object& answer = review.at("response").as_object();
        const bool patched = answer.contains("patch");
        storm.result.patched += candidate && patched ? 1 : 0;
        storm.result.wrongly_patched += !candidate && patched ? 1 : 0;
        storm.result.warned += answer.contains("warnings") ? 1 : 0;
    }
}

Result storm(const Options& options, unsigned short port, const std::string& ca_file) {
    asio::io_context io;
    Storm storm(io);
    storm.lanes_waiting = options.concurrency;
    for (int pod = 0; pod < options.pods; ++pod) {
        storm.result.expected += is_candidate(pod, options) ? 1 : 0;
        storm.reviews.push_back(
            pod_review(pod, pod % options.deployments, (pod / options.deployments) % 2));
    }
    ssl::context tls(ssl::context::tls_client);
    tls.load_verify_file(ca_file);
    tls.set_verify_mode(ssl::verify_peer);
    for (int c = 0; c < options.concurrency; ++c) {
        asio::co_spawn(io, lane(storm, tls, port, options), [&storm](std::exception_ptr error) {
            // A lane that lost its connection leaves its Pods to the others.
            storm.result.lost_lanes += error ? 1 : 0;
        });
    }
    io.run();
    storm.result.seconds = std::chrono::duration<double>(Clock::now() - storm.started).count();
    return storm.result;
}

int run(const Options& options) {
    const mdadmit::bench::Workspace workspace("pod-storm");
    const std::string token = "storm-token";
    mdadmit::test::write_file(workspace.directory() / "token", token + "\n");

    const std::optional<int> webhook_cpu =
        options.split_cpus ? mdadmit::bench::keep_one_cpu_apart() : std::nullopt;
    FakeKubeApi api(token);
    for (int i = 0; i < options.deployments; ++i) {
        api.put(deployments_path, deployment(i));
    }
    api.set_delay(std::chrono::milliseconds(options.api_delay_ms));

    const mdadmit::bench::ChildProcess webhook(
        workspace.webhook_command(
            options.webhook,
            {"--threads", std::to_string(options.webhook_threads), "--kube-api-server",
             "127.0.0.1:" + std::to_string(api.port()), "--kube-ca-file", api.ca_file(),
             "--kube-server-name", "localhost", "--kube-token-file",
             workspace.directory() / "token", "--log-level", "error"}),
        webhook_cpu);
    const unsigned short health = workspace.health_port();
    const auto ready_after = mdadmit::bench::wait_until_ready(health, std::chrono::seconds(30));
    const bool ready = ready_after.has_value();
    const int gets_before = api.gets();

    const Result result = ready ? storm(options, workspace.port(), workspace.ca_file()) : Result{};
    const std::string metrics = mdadmit::test::plain_get(health, "/metrics").second;

    std::printf("webhook: %s\n", options.webhook.c_str());
    std::printf("storm: %d Pods of %d ModelDeployments, %d at a time, API latency %d ms\n",
                options.pods, options.deployments, options.concurrency, options.api_delay_ms);
    if (!ready) {
        std::printf("the webhook did not become ready within 30 s\n");
        return 1;
    }
    std::printf("ready after: %lld ms\n", static_cast<long long>(ready_after->count()));
    std::printf("webhook CPU: %s\n", webhook_cpu ? std::to_string(*webhook_cpu).c_str() : "shared");
    std::printf("answered: %d of %d Pods (other status: %d, connections lost: %d)\n",
                result.answered, options.pods, result.failed, result.lost_lanes);
    std::printf("labelled: %d of %d that should be (wrongly patched: %d, warned: %d)\n",
                result.patched, result.expected, result.wrongly_patched, result.warned);
    std::printf(
        "API requests: LIST ModelDeployment %d, WATCH ModelDeployment %d, LIST "
        "InstanceType %d, WATCH InstanceType %d, GET %d (%d during the storm)\n",
        api.lists(deployments_path), api.watches(deployments_path), api.lists(instance_types_path),
        api.watches(instance_types_path), api.gets(), api.gets() - gets_before);
    std::printf("client latency ms: p50 %.2f, p99 %.2f, max %.2f; storm took %.2f s\n",
                percentile(result.latencies_ms, 0.50), percentile(result.latencies_ms, 0.99),
                percentile(result.latencies_ms, 1.0), result.seconds);
    const auto histogram = server_histogram(metrics);
    std::printf("server /mutate latency ms (histogram bucket): p50 %s, p99 %s\n",
                server_quantile(histogram, 0.50).c_str(), server_quantile(histogram, 0.99).c_str());
    std::printf("server /mutate requests per bucket (ms): %s\n",
                server_distribution(histogram).c_str());
    // The target: every Pod labelled as it should be, from the cache (no GET while Pods wait).
    const bool met = result.answered == options.pods && result.lost_lanes == 0 &&
                     result.patched == result.expected && result.wrongly_patched == 0 &&
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
