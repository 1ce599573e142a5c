#!/usr/bin/env bash
# A release build of mdadmit-webhook and mdadmit with GCC's profile-guided optimisation: built
# instrumented, trained on the reviews a cluster sends most (bench/pgo_train.cpp), and built
# again with the profile the training wrote. Measured in bench/RESULTS.md.
#   tools/pgo-build.sh [BUILD_DIR]      (default build-pgo)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-pgo}
jobs=$(nproc)
configure() {
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DMDADMIT_BUILD_TESTS=OFF \
        -DMDADMIT_BUILD_BENCH=ON -DMDADMIT_PGO="$1" >/dev/null
}

configure generate
find "$build" -name '*.gcda' -delete
cmake --build "$build" -j"$jobs" --target mdadmit-webhook mdadmit_pgo_train
"$build/bench/mdadmit_pgo_train" --webhook "$build/server/mdadmit-webhook"

configure use
cmake --build "$build" -j"$jobs" --target mdadmit-webhook mdadmit
echo "built with the profile: $build/server/mdadmit-webhook, $build/cli/mdadmit"
