#include "kustomize.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "command.hpp"

namespace mdadmit::test {

std::string kustomize(const std::string& source_dir, const std::string& directory) {
    const std::filesystem::path errors = std::filesystem::temp_directory_path() /
                                         ("mdadmit-kustomize-" + std::to_string(::getpid()));
    const std::string command =
        "kubectl kustomize '" + source_dir + "/" + directory + "' 2>'" + errors.string() + "'";
    CommandOutput rendered = run_command(command);
    if (rendered.status != 0) {
        std::ifstream in(errors);
        std::ostringstream text;
        text << in.rdbuf();
        std::filesystem::remove(errors);
        throw std::runtime_error("kubectl kustomize " + directory +
                                 " failed (install kubectl: " + "tools/setup.sh): " + text.str());
    }
    std::filesystem::remove(errors);
    return std::move(rendered.out);
}

}  // namespace mdadmit::test
