// The training run of a profile-guided build (tools/pgo-build.sh): starts an instrumented
// webhook, sends it the reviews a cluster sends most (admitted, denied and warned
// ModelDeployments, mostly on open connections and some on new ones), then stops it with
// SIGTERM so that it exits normally and writes its profile.
//
//   mdadmit_pgo_train --webhook BUILD/server/mdadmit-webhook [--reviews 20000]
//
// Exit 0 when every review was answered 200 and the webhook exited 0.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_process.hpp"
#include "https_client.hpp"

namespace {

namespace bench = mdadmit::bench;
namespace test = mdadmit::test;

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw std::runtime_error("cannot read " + path);
    }
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// Sends `count` reviews, eight admitted (as written and as kube-apiserver sends a kubectl apply,
// in turn) to one denied and one warned; every 50th (an admitted one) on a new connection. The
// number answered 200.
int send_reviews(unsigned short port, const test::ClientOptions& options, int count) {
    const std::string source = MDADMIT_SOURCE_DIR;
    const std::vector<std::string> reviews{read_file(source + "/bench/data/review-allowed.json"),
                                           read_file(source + "/bench/data/review-applied.json"),
                                           read_file(source + "/examples/review-denied.json"),
                                           read_file(source + "/examples/review-warned.json")};
    int answered = 0;
    test::HttpsClient open(port, options);
    if (!open.connect()) {
        throw std::runtime_error("cannot connect: " + open.last_error());
    }
    for (int i = 0; i < count; ++i) {
        const std::string& review = reviews[i % 10 == 8 ? 2 : i % 10 == 9 ? 3 : i % 2];
        if (i % 50 == 25) {
            answered += test::post_once(port, options, "/validate", review) == 200;
            continue;
        }
        answered += open.request("POST", "/validate", review).status == 200;
    }
    return answered;
}

}  // namespace

int main(int argc, char** argv) {
    std::string webhook;
    int reviews = 20000;
    try {
        bench::parse_flags(argc, argv,
                           {{"--webhook", bench::text_flag(webhook)},
                            {"--reviews", bench::integer_flag(reviews)}});
        if (webhook.empty()) {
            throw std::runtime_error("--webhook is required");
        }
        // The training webhook reads no cluster, even when built inside one.
        ::unsetenv("KUBERNETES_SERVICE_HOST");
        const bench::Workspace workspace("pgo-train");
        // The InstanceTypes a cluster's webhook reads from the API: the admitted review's roles
        // name one, so that it is admitted without a warning, as in a cluster.
        const std::string instance_types =
            std::string(MDADMIT_SOURCE_DIR) + "/bench/data/instance-types.yaml";
        bench::ChildProcess child(
            workspace.webhook_command(
                webhook, {"--log-level", "warn", "--shutdown-delay", "10ms", "--threads", "2",
                          "--instance-types", instance_types}),
            std::nullopt);
        if (!bench::wait_until_ready(workspace.health_port(), std::chrono::seconds(30))) {
            throw std::runtime_error("the webhook did not become ready within 30 s");
        }
        test::ClientOptions options;
        options.ca_file = workspace.ca_file();
        const int answered = send_reviews(workspace.port(), options, reviews);
        const int exit_code = child.stop();
        std::printf("reviews answered 200: %d of %d; webhook exit code %d\n", answered, reviews,
                    exit_code);
        return answered == reviews && exit_code == 0 ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "mdadmit_pgo_train: %s\n", e.what());
        return 2;
    }
}
