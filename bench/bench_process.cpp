#include "bench_process.hpp"

#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cerrno>
#include <random>
#include <stdexcept>
#include <thread>

#include "https_client.hpp"
#include "test_certificates.hpp"

namespace mdadmit::bench {

FlagSetter text_flag(std::string& out) {
    return [&out](const std::string& value) { out = value; };
}

FlagSetter integer_flag(int& out) {
    return [&out](const std::string& value) { out = std::stoi(value); };
}

FlagSetter on_off_flag(bool& out) {
    return [&out](const std::string& value) { out = value == "on"; };
}

void parse_flags(int argc, char** argv, const std::map<std::string, FlagSetter>& setters) {
    for (int i = 1; i < argc; i += 2) {
        const std::string name = argv[i];
        const auto setter = setters.find(name);
        if (setter == setters.end()) {
            throw std::runtime_error("unknown option " + name);
        }
        if (i + 1 == argc) {
            throw std::runtime_error(name + ": missing value");
        }
        setter->second(argv[i + 1]);
    }
}

unsigned short free_port(unsigned short other_than) {
    // Linux hands out 32768-60999 by default to outgoing connections; a port below that range
    // cannot be taken by a connection (this process's readiness polls, or a test running
    // beside it) between now and the webhook's bind.
    static std::mt19937 random(std::random_device{}());
    std::uniform_int_distribution<int> below_ephemeral(10000, 20000);
    boost::asio::io_context io;
    for (int attempt = 0; attempt < 200; ++attempt) {
        const auto port = static_cast<unsigned short>(below_ephemeral(random));
        if (port == other_than) {
            continue;
        }
        boost::asio::ip::tcp::acceptor acceptor(io);
        boost::system::error_code ec;
        acceptor.open(boost::asio::ip::tcp::v4(), ec);
        if (!ec) {
            acceptor.bind({boost::asio::ip::make_address("127.0.0.1"), port}, ec);
        }
        if (!ec) {
            return port;
        }
    }
    throw std::runtime_error("no free loopback port in 10000-20000");
}

std::optional<int> keep_one_cpu_apart() {
    cpu_set_t allowed;
    if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) < 2) {
        return std::nullopt;
    }
    int first = 0;
    while (!CPU_ISSET(first, &allowed)) {
        ++first;
    }
    CPU_CLR(first, &allowed);
    if (::sched_setaffinity(0, sizeof allowed, &allowed) != 0) {
        return std::nullopt;
    }
    return first;
}

double percentile(std::vector<double> values, double p) {
    if (values.empty()) {
        return 0;
    }
    std::sort(values.begin(), values.end());
    const auto at = static_cast<std::size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
    return values[std::min(at, values.size() - 1)];
}

Workspace::Workspace(const std::string& name)
    : directory_(std::filesystem::temp_directory_path() /
                 ("mdadmit-" + name + "-" + std::to_string(::getpid()))),
      port_(free_port()),
      health_port_(free_port(port_)) {
    std::filesystem::create_directories(directory_);
    test::TestCa ca(name + " CA");
    const auto serving = ca.issue("localhost");
    test::write_file(directory_ / "ca.crt", ca.pem().certificate);
    test::write_file(directory_ / "tls.crt", serving.certificate);
    test::write_file(directory_ / "tls.key", serving.key);
}

Workspace::~Workspace() {
    std::error_code ignored;
    std::filesystem::remove_all(directory_, ignored);
}

std::vector<std::string> Workspace::webhook_command(const std::string& binary,
                                                    const std::vector<std::string>& more) const {
    std::vector<std::string> command{binary,
                                     "--cert-file",
                                     directory_ / "tls.crt",
                                     "--key-file",
                                     directory_ / "tls.key",
                                     "--listen",
                                     "127.0.0.1:" + std::to_string(port_),
                                     "--health-listen",
                                     "127.0.0.1:" + std::to_string(health_port_)};
    command.insert(command.end(), more.begin(), more.end());
    return command;
}

ChildProcess::ChildProcess(std::vector<std::string> command, std::optional<int> cpu) {
    if (cpu) {
        command.insert(command.begin(), {"/usr/bin/taskset", "--cpu-list", std::to_string(*cpu)});
    }
    std::vector<char*> argv;
    for (auto& argument : command) {
        argv.push_back(argument.data());
    }
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, argv[0], nullptr, nullptr, argv.data(), environ) != 0) {
        throw std::runtime_error("cannot start " + command.front());
    }
}

ChildProcess::~ChildProcess() {
    if (pid_ != 0) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
    }
}

int ChildProcess::stop() {
    if (pid_ == 0) {
        return -1;  // already stopped: kill(0) would signal our own process group
    }
    ::kill(pid_, SIGTERM);
    int status = 0;
    pid_t reaped = -1;
    do {
        reaped = ::waitpid(pid_, &status, 0);
    } while (reaped == -1 && errno == EINTR);
    pid_ = 0;
    return reaped != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::optional<std::chrono::milliseconds> wait_until_ready(unsigned short health_port,
                                                          std::chrono::milliseconds timeout,
                                                          std::chrono::microseconds poll) {
    using Clock = std::chrono::steady_clock;
    const auto started = Clock::now();
    while (Clock::now() - started < timeout) {
        std::this_thread::sleep_for(poll);
        try {
            if (test::plain_get(health_port, "/readyz").first == 200) {
                return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() -
                                                                             started);
            }
        } catch (const std::exception&) {
            // Nothing listens on the health port yet.
        }
    }
    return std::nullopt;
}

}  // namespace mdadmit::bench
