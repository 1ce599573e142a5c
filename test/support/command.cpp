#include "command.hpp"

#include <array>
#include <cstdio>

namespace mdadmit::test {

CommandOutput run_command(const std::string& command_line) {
    CommandOutput result;
    FILE* pipe = ::popen(command_line.c_str(), "r");
    if (pipe == nullptr) {
        return result;
    }
    std::array<char, 4096> chunk{};
    for (std::size_t n; (n = std::fread(chunk.data(), 1, chunk.size(), pipe)) > 0;) {
        result.out.append(chunk.data(), n);
    }
    result.status = ::pclose(pipe);
    return result;
}

}  // namespace mdadmit::test
