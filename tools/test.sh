#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds mdadmit optimised (-O2, so the optimiser's
# warnings are errors too) with AddressSanitizer and UndefinedBehaviorSanitizer, and runs
# the whole test suite.
#   tools/test.sh            (build directory: build-test)
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
build=${MDADMIT_TEST_BUILD_DIR:-build-test}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMDADMIT_SANITIZE=ON -DMDADMIT_BUILD_TESTS=ON
cmake --build "$build" -j "$(nproc)"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
