#!/usr/bin/env bash
# Instructions per review of the admission path (`Admission::admit`: the review's bytes in, its
# answer out), counted by valgrind's callgrind in this checkout's engine micro benchmark and in
# another build's (a baseline), with the ratio. A count does not move with a shared machine's
# noise, so a change of one percent shows where engine_compare.sh's times cannot tell it; it is
# not a time either (a cache miss counts as one instruction), so a change that moves memory
# around needs engine_compare.sh as well.
#   bench/engine_instructions.sh BASELINE_BUILD_DIR [FILTER...]
# The filters default to the three reviews of a cluster's everyday work: typical_on_a_cluster,
# update_on_a_cluster and ten_roles_100_flags. MDADMIT_BENCH_BUILD_DIR is this checkout's build
# (default build-bench); see engine_compare.sh for a baseline build of an earlier commit.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/admit_calls.sh
baseline=${1:?usage: bench/engine_instructions.sh BASELINE_BUILD_DIR [FILTER...]}
shift
filters=("$@")
((${#filters[@]})) || filters=(typical_on_a_cluster update_on_a_cluster ten_roles_100_flags)
build=${MDADMIT_BENCH_BUILD_DIR:-build-bench}
command -v valgrind >/dev/null || {
    echo "valgrind is missing: tools/setup.sh --bench installs it" >&2
    exit 1
}
[[ -x "$baseline/bench/mdadmit_engine_bench" ]] || {
    echo "no engine micro benchmark in $baseline/bench: give a build directory of the baseline" >&2
    exit 1
}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DMDADMIT_BUILD_TESTS=OFF -DMDADMIT_BUILD_BENCH=ON >/dev/null
cmake --build "$build" -j "$(nproc)" --target mdadmit_engine_bench >/dev/null

out=$(mktemp)
trap 'rm -f "$out"' EXIT
# Instructions per call of Admission::admit in one benchmark of one build. Only the calls are
# counted (callgrind collects inside Admission::admit alone); the benchmark function calls it
# once per iteration, and its line in the caller tree gives the number of calls.
# A run that fails leaves no count behind, so that it cannot report the run before it.
per_review() {
    rm -f "$out"
    valgrind --tool=callgrind --toggle-collect='mdadmit::admission::Admission::admit*' \
        --callgrind-out-file="$out" "$1/bench/mdadmit_engine_bench" \
        --benchmark_filter="^admit/$2\$" --benchmark_min_time=0.5 >/dev/null 2>&1 || {
        echo "callgrind failed on $1/bench/mdadmit_engine_bench, admit/$2" >&2
        return 1
    }
    local total calls
    total=$(callgrind_annotate "$out" | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
    calls=$(admit_calls "$out")
    echo $((total / calls))
}

printf '%-36s %14s %14s %12s\n' benchmark this baseline "this / base"
for filter in "${filters[@]}"; do
    this=$(per_review "$build" "$filter")
    base=$(per_review "$baseline" "$filter")
    printf '%-36s %14d %14d %12.3f\n' "admit/$filter" "$this" "$base" "$(bc -l <<<"$this / $base")"
done
