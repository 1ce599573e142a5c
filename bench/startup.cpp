// Start-up: from exec of the webhook binary to its first 200 on /readyz, with the built-in
// rule data and no cluster to read. The reference in the same run is exec to exit of the
// same binary printing --help: what loading the program and its libraries costs alone.
//
//   mdadmit_startup --webhook build/server/mdadmit-webhook [--runs 20] [--max-ms 50]
//
// Exit 0 when the median exec to ready is under --max-ms.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_process.hpp"

namespace {

using Clock = std::chrono::steady_clock;
namespace bench = mdadmit::bench;

double milliseconds_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// exec to exit of `webhook --help`, its output discarded.
double help_run(const std::string& webhook) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    std::string path = webhook;
    std::string flag = "--help";
    char* argv[] = {path.data(), flag.data(), nullptr};
    const auto started = Clock::now();
    pid_t pid = 0;
    if (posix_spawn(&pid, argv[0], &actions, nullptr, argv, environ) != 0) {
        throw std::runtime_error("cannot start " + webhook);
    }
    posix_spawn_file_actions_destroy(&actions);
    ::waitpid(pid, nullptr, 0);
    return milliseconds_since(started);
}

// exec to the first 200 on /readyz, polling every 200 us.
double ready_run(const std::string& webhook) {
    const bench::Workspace workspace("startup");
    const auto started = Clock::now();
    const bench::ChildProcess child(workspace.webhook_command(webhook, {"--log-level", "warn"}),
                                    std::nullopt);
    if (!bench::wait_until_ready(workspace.health_port(), std::chrono::seconds(10),
                                 std::chrono::microseconds(200))) {
        throw std::runtime_error("the webhook did not become ready within 10 s");
    }
    return milliseconds_since(started);
}

}  // namespace

int main(int argc, char** argv) {
    try {
        std::string webhook;
        int runs = 20;
        int max_ms = 50;
        bench::parse_flags(argc, argv,
                           {{"--webhook", bench::text_flag(webhook)},
                            {"--runs", bench::integer_flag(runs)},
                            {"--max-ms", bench::integer_flag(max_ms)}});
        if (webhook.empty()) {
            throw std::runtime_error(
                "usage: mdadmit_startup --webhook PATH [--runs N] [--max-ms N]");
        }
        std::vector<double> ready;
        std::vector<double> help;
        for (int i = 0; i < runs; ++i) {
            help.push_back(help_run(webhook));
            ready.push_back(ready_run(webhook));
        }
        const auto line = [](const char* what, const std::vector<double>& values) {
            std::printf("%-26s min %6.2f  median %6.2f  max %6.2f ms\n", what,
                        bench::percentile(values, 0), bench::percentile(values, 0.5),
                        bench::percentile(values, 1));
        };
        std::printf("webhook: %s, %d runs\n", webhook.c_str(), runs);
        line("exec to ready", ready);
        line("exec to exit of --help", help);
        std::printf("ready / --help (medians): %.1f\n",
                    bench::percentile(ready, 0.5) / bench::percentile(help, 0.5));
        return bench::percentile(ready, 0.5) < max_ms ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "mdadmit_startup: %s\n", e.what());
        return 2;
    }
}
