#pragma once
// What the benchmarks that drive the webhook binary share: loopback ports, the webhook as a
// child process on a CPU of its own, and percentiles of the client's latencies.
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mdadmit::bench {

// What a flag does with its value.
using FlagSetter = std::function<void(const std::string&)>;
FlagSetter text_flag(std::string& out);
FlagSetter integer_flag(int& out);
FlagSetter on_off_flag(bool& out);

// Reads `--name value` pairs into their setters; an unknown name or a missing value throws.
void parse_flags(int argc, char** argv, const std::map<std::string, FlagSetter>& setters);

// A loopback port nothing listens on now, outside the range outgoing connections are given,
// and not `other_than`.
unsigned short free_port(unsigned short other_than = 0);

// Keeps this process (and the threads it starts from now on) off the first CPU it may use,
// and returns that CPU for the webhook; nothing when it may use only one.
std::optional<int> keep_one_cpu_apart();

// The p-th quantile (0..1) of `values`; 0 when there are none.
double percentile(std::vector<double> values, double p);

// A scratch directory holding a CA (ca.crt) and a serving certificate for localhost
// (tls.crt, tls.key), removed with the object; and the loopback ports of one webhook.
class Workspace {
  public:
    explicit Workspace(const std::string& name);
    Workspace(const Workspace&) = delete;
    Workspace& operator=(const Workspace&) = delete;
    ~Workspace();

    const std::filesystem::path& directory() const { return directory_; }
    std::string ca_file() const { return directory_ / "ca.crt"; }
    unsigned short port() const { return port_; }
    unsigned short health_port() const { return health_port_; }
    // The webhook's command line on these ports with this certificate, then `more`.
    std::vector<std::string> webhook_command(const std::string& binary,
                                             const std::vector<std::string>& more) const;

  private:
    std::filesystem::path directory_;
    unsigned short port_;
    unsigned short health_port_;
};

// A child process (the webhook), started from `command`, pinned to `cpu` when given with
// taskset; killed and reaped however the benchmark ends, unless stopped before.
class ChildProcess {
  public:
    ChildProcess(std::vector<std::string> command, std::optional<int> cpu);
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;
    ~ChildProcess();

    // Sends SIGTERM and waits for the process to exit: its exit code, or -1 when a signal
    // ended it, it could not be waited for, or it was already stopped.
    int stop();

  private:
    pid_t pid_ = 0;
};

// Polls /readyz on the plain health port every `poll` until it answers 200; the time that
// took, or nothing after `timeout`.
std::optional<std::chrono::milliseconds> wait_until_ready(
    unsigned short health_port, std::chrono::milliseconds timeout,
    std::chrono::microseconds poll = std::chrono::milliseconds(20));

}  // namespace mdadmit::bench
