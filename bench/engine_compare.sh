#!/usr/bin/env bash
# A/B of the engine micro benchmark: this checkout's mdadmit_engine_bench against another
# build's (a baseline), in alternating short runs, so that the noise of a shared machine falls
# on both alike (its speed moves by half from one minute to the next). Prints, per benchmark,
# each build's median time and the median over the pairs of this / baseline, with their range.
#   bench/engine_compare.sh BASELINE_BUILD_DIR [PAIRS] [FILTER]   (default 10 pairs, "admit/")
# MDADMIT_BENCH_BUILD_DIR is this checkout's build (default build-bench). A baseline build of an
# earlier commit:
#   git worktree add /tmp/baseline <commit> &&
#   cmake -S /tmp/baseline -B /tmp/baseline-build -DCMAKE_BUILD_TYPE=Release \
#       -DMDADMIT_BUILD_TESTS=OFF -DMDADMIT_BUILD_BENCH=ON &&
#   cmake --build /tmp/baseline-build --target mdadmit_engine_bench
set -euo pipefail
cd "$(dirname "$0")/.."
baseline=${1:?usage: bench/engine_compare.sh BASELINE_BUILD_DIR [PAIRS] [FILTER]}
pairs=${2:-10}
filter=${3:-admit/}
build=${MDADMIT_BENCH_BUILD_DIR:-build-bench}
tools/setup.sh >/dev/null
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DMDADMIT_BUILD_TESTS=OFF -DMDADMIT_BUILD_BENCH=ON >/dev/null
cmake --build "$build" -j "$(nproc)" --target mdadmit_engine_bench >/dev/null

# One short run of a build: "PAIR BUILD NAME NANOSECONDS" per benchmark.
run() {
    "$2/bench/mdadmit_engine_bench" --benchmark_filter="$filter" --benchmark_min_time=0.3 2>/dev/null |
        awk -v pair="$1" -v which="$3" '/^[a-z]/ && $2 ~ /^[0-9.]+$/ { print pair, which, $1, $2 }'
}

# The median of the numbers on stdin.
median() {
    sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

results=$(mktemp)
trap 'rm -f "$results"' EXIT
for pair in $(seq "$pairs"); do
    # Alternating order within the pairs, so that neither build always runs first.
    if ((pair % 2)); then
        run "$pair" "$build" this >>"$results"
        run "$pair" "$baseline" base >>"$results"
    else
        run "$pair" "$baseline" base >>"$results"
        run "$pair" "$build" this >>"$results"
    fi
done

echo "$pairs pairs of 0.3 s runs; ns per iteration"
printf '%-40s %12s %12s %14s %12s\n' benchmark this baseline "this / base" range
for name in $(awk '{ print $3 }' "$results" | awk '!seen[$0]++'); do
    ratios=$(awk -v n="$name" '$3 == n { t[$1 " " $2] = $4; p[$1] = 1 }
        END { for (i in p) if ((i " this") in t && (i " base") in t) print t[i " this"] / t[i " base"] }' "$results")
    [[ -n $ratios ]] || continue  # a benchmark only one build has
    this=$(awk -v n="$name" '$3 == n && $2 == "this" { print $4 }' "$results" | median)
    base=$(awk -v n="$name" '$3 == n && $2 == "base" { print $4 }' "$results" | median)
    printf '%-40s %12.0f %12.0f %14.3f %12s\n' "$name" "$this" "$base" "$(median <<<"$ratios")" \
        "$(sort -g <<<"$ratios" | sed -n '1p;$p' | awk '{ printf (NR == 1 ? "%.2f-" : "%.2f"), $1 }')"
done
