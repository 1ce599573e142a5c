// The webhook binary as Kubernetes runs it: started with flags, stopped with SIGTERM.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "https_client.hpp"
#include "server_fixture.hpp"

extern char** environ;

namespace mdadmit::test {
namespace {

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

TEST(WebhookBinary, SigtermWhileRequestsFlowAnswersThemAllAndExitsZero) {
    const std::string directory =
        testing::TempDir() + "/mdadmit-signal-" + std::to_string(::getpid());
    std::filesystem::create_directories(directory);
    TestCa ca;
    const PemPair serving = ca.issue("localhost");
    write_file(directory + "/ca.crt", ca.pem().certificate);
    write_file(directory + "/tls.crt", serving.certificate);
    write_file(directory + "/tls.key", serving.key);
    const std::string log = directory + "/webhook.log";
    const std::chrono::milliseconds shutdown_delay(300);

    std::vector<std::string> arguments{MDADMIT_WEBHOOK_BINARY,
                                       "--cert-file",
                                       directory + "/tls.crt",
                                       "--key-file",
                                       directory + "/tls.key",
                                       "--listen",
                                       "127.0.0.1:0",
                                       "--health-listen",
                                       "off",
                                       "--shutdown-delay",
                                       std::to_string(shutdown_delay.count()) + "ms",
                                       "--drain-timeout",
                                       "5s",
                                       "--log-format",
                                       "text"};
    std::vector<char*> argv;
    for (auto& argument : arguments) {
        argv.push_back(argument.data());
    }
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = 0;
    ASSERT_EQ(posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);

    unsigned short port = 0;
    const std::regex serving_line("tls_port=([0-9]+)");
    for (int i = 0; i < 200 && port == 0; ++i) {
        std::smatch match;
        const std::string text = read_text(log);
        if (std::regex_search(text, match, serving_line)) {
            port = static_cast<unsigned short>(std::stoi(match[1]));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    ASSERT_NE(port, 0) << read_text(log);

    ClientOptions options;
    options.ca_file = directory + "/ca.crt";
    using Clock = std::chrono::steady_clock;
    std::atomic<bool> stop{false};
    std::atomic<Clock::time_point> drain_begins{Clock::time_point::max()};
    std::atomic<int> answered{0};
    std::atomic<int> failed_with_connection_open{0};
    // Clients keep coming until the listener stops; every connection that was accepted
    // gets its answer (during the shutdown delay with Connection: close). The one request
    // that may go unanswered is the next one on a keep-alive connection that the client
    // sends only after the delay: the drain closes idle connections, and a client stalled
    // past the delay (a loaded machine) races that close, as any keep-alive client may.
    std::thread load([&] {
        while (!stop) {
            HttpsClient client(port, options);
            if (!client.connect()) {
                return;
            }
            const std::string review = validate_review(denied_object);
            for (bool first = true, keep_alive = true; keep_alive && !stop; first = false) {
                const auto sent = Clock::now();
                const auto response = client.request("POST", "/validate", review);
                if (response.status != 200) {
                    // Status 0: the connection closed without an answer.
                    const bool closed_idle =
                        !first && response.status == 0 && sent >= drain_begins.load();
                    if (!closed_idle) {
                        ++failed_with_connection_open;
                    }
                    return;
                }
                ++answered;
                keep_alive = response.keep_alive;
            }
        }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    drain_begins = Clock::now() + shutdown_delay;
    ASSERT_EQ(::kill(pid, SIGTERM), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    stop = true;
    load.join();
    EXPECT_TRUE(WIFEXITED(status)) << read_text(log);
    EXPECT_EQ(WEXITSTATUS(status), 0) << read_text(log);
    EXPECT_GT(answered.load(), 0);
    EXPECT_EQ(failed_with_connection_open.load(), 0);
    const std::string text = read_text(log);
    EXPECT_NE(text.find("shutdown requested signal=15"), std::string::npos) << text;
    EXPECT_NE(text.find("drained; exiting"), std::string::npos) << text;
    EXPECT_NE(text.find("admission decision uid=uid-1 operation=CREATE kind=ModelDeployment"),
              std::string::npos);
    std::filesystem::remove_all(directory);
}

}  // namespace
}  // namespace mdadmit::test
