#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine and runs the whole test suite on two builds:
#   1. clang, optimised (-O2), with AddressSanitizer and UndefinedBehaviorSanitizer: memory and
#      undefined behaviour, and a view of a temporary (clang ends temporaries' lifetimes where
#      GCC keeps them);
#   2. GCC as released (-O3): the compiler and optimisation the shipped programs are built with,
#      whose warnings are errors too.
# Every test, fuzz corpus replay and smoke run of the benchmark programs runs on both.
# Sanitized, clang builds the project in half the time GCC takes (bench/RESULTS.md, "The test
# suite's two builds").
#   tools/test.sh      (build directories: build-sanitize, build-release)
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
jobs=$(nproc)

sanitized=${MDADMIT_SANITIZE_BUILD_DIR:-build-sanitize}
CXX=clang++ cmake -S . -B "$sanitized" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMDADMIT_SANITIZE=ON \
    -DMDADMIT_BUILD_TESTS=ON
cmake --build "$sanitized" -j "$jobs"
ctest --test-dir "$sanitized" --output-on-failure -j "$jobs"

release=${MDADMIT_RELEASE_BUILD_DIR:-build-release}
CXX=g++ cmake -S . -B "$release" -DCMAKE_BUILD_TYPE=Release -DMDADMIT_BUILD_TESTS=ON
cmake --build "$release" -j "$jobs"
ctest --test-dir "$release" --output-on-failure -j "$jobs"
