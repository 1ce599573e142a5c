#pragma once

#include <string>

namespace mdadmit::test {

struct CommandOutput {
    int status = -1;  // as pclose returns it; 0 when the command exited 0
    std::string out;  // what it wrote to stdout
};

// Runs a shell command line and collects its stdout.
CommandOutput run_command(const std::string& command_line);

}  // namespace mdadmit::test
