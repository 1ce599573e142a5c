#pragma once

#include <string>

namespace mdadmit::test {

// `kubectl kustomize DIRECTORY` (relative to the source tree): the rendered YAML. Throws with
// kubectl's error output when it fails or is not installed (tools/setup.sh installs it).
// Deprecation warnings of newer kustomize versions go to stderr and are not part of the text.
std::string kustomize(const std::string& source_dir, const std::string& directory);

}  // namespace mdadmit::test
