#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds mdadmit optimised (-O2) with AddressSanitizer and
# UndefinedBehaviorSanitizer, builds the shipped programs as released (-O3), and runs the
# whole test suite; then builds the engine's tests and the fuzz replays with clang under the
# same sanitizers and runs them too (clang ends temporaries' lifetimes where GCC keeps them).
#   tools/test.sh            (build directory: build-test)
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
build=${MDADMIT_TEST_BUILD_DIR:-build-test}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMDADMIT_SANITIZE=ON -DMDADMIT_BUILD_TESTS=ON
cmake --build "$build" -j "$(nproc)"
# The programs as shipped (Release, -O3) must build warning-free too.
release=${MDADMIT_RELEASE_BUILD_DIR:-build-release}
cmake -S . -B "$release" -DCMAKE_BUILD_TYPE=Release -DMDADMIT_BUILD_TESTS=OFF >/dev/null
cmake --build "$release" -j "$(nproc)" --target mdadmit-webhook mdadmit
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"

clang_build=${MDADMIT_CLANG_BUILD_DIR:-build-clang}
CXX=clang++ cmake -S . -B "$clang_build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMDADMIT_SANITIZE=ON \
    -DMDADMIT_BUILD_TESTS=ON >/dev/null
replays=(request_read admission rule_data manifest model)
cmake --build "$clang_build" -j "$(nproc)" --target mdadmit_unit_tests mdadmit_admission_tests \
    "${replays[@]/#/mdadmit_fuzz_}"
"$clang_build/test/mdadmit_unit_tests" --gtest_brief=1
"$clang_build/test/mdadmit_admission_tests" --gtest_brief=1
for target in "${replays[@]}"; do
    "$clang_build/test/fuzz/mdadmit_fuzz_$target" "test/fuzz/corpus/$target"
done
