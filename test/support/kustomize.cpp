#include "kustomize.hpp"

#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace mdadmit::test {

std::string kustomize(const std::string& source_dir, const std::string& directory) {
    const std::filesystem::path errors = std::filesystem::temp_directory_path() /
                                         ("mdadmit-kustomize-" + std::to_string(::getpid()));
    const std::string command =
        "kubectl kustomize '" + source_dir + "/" + directory + "' 2>'" + errors.string() + "'";
    std::string out;
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe != nullptr) {
        std::array<char, 4096> chunk{};
        for (std::size_t n; (n = std::fread(chunk.data(), 1, chunk.size(), pipe)) > 0;) {
            out.append(chunk.data(), n);
        }
    }
    const int status = pipe != nullptr ? ::pclose(pipe) : -1;
    if (status != 0) {
        std::ifstream in(errors);
        std::ostringstream text;
        text << in.rdbuf();
        std::filesystem::remove(errors);
        throw std::runtime_error("kubectl kustomize " + directory +
                                 " failed (install kubectl: " + "tools/setup.sh): " + text.str());
    }
    std::filesystem::remove(errors);
    return out;
}

}  // namespace mdadmit::test
