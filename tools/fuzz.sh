#!/usr/bin/env bash
# Builds the fuzz targets with clang's libFuzzer under AddressSanitizer and
# UndefinedBehaviorSanitizer, then runs each for SECONDS (default 60) on its corpus. Inputs that
# reach new code are written to build-fuzz/corpus/<target>; a crash or a broken invariant is
# written to build-fuzz/crashes/ and stops that target (copy it into test/fuzz/corpus/<target>/
# once fixed, so every build replays it).
#   tools/fuzz.sh [SECONDS] [TARGET ...]     targets: http request_read admission rule_data manifest model
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
seconds=${1:-60}
shift || true
targets=("$@")
if ((${#targets[@]} == 0)); then
    targets=(http request_read admission rule_data manifest model)
fi
build=${MDADMIT_FUZZ_BUILD_DIR:-build-fuzz}
CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMDADMIT_FUZZ=ON \
    -DMDADMIT_SANITIZE=ON -DMDADMIT_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target "${targets[@]/#/mdadmit_fuzz_}"
mkdir -p "$build/crashes"
status=0
for target in "${targets[@]}"; do
    mkdir -p "$build/corpus/$target"
    log="$build/fuzz-$target.log"
    if ! "$build/test/fuzz/mdadmit_fuzz_$target" -max_total_time="$seconds" -print_final_stats=1 \
        -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$build/crashes/$target-" \
        "$build/corpus/$target" "test/fuzz/corpus/$target" >"$log" 2>&1; then
        status=1
        echo "$target: FAILED, see $log and $build/crashes/"
    fi
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
    coverage=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo 0)
    features=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo 0)
    corpus=$(find "$build/corpus/$target" -type f | wc -l)
    echo "$target: ${seconds} s, ${runs} executions, coverage ${coverage} edges, ${features} features, ${corpus} new corpus inputs"
done
exit $status
