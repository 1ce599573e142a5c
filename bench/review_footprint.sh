#!/usr/bin/env bash
# How much of the machine's caches one review (`Admission::admit`, bytes in, answer out) passes
# through, counted by valgrind's cache simulation in the engine micro benchmark, with the
# geometry of this machine's first and second level caches (from /sys; a core's own caches):
#   instructions per review;
#   code lines per review: the lines of machine code the review runs, each missing the
#     first-level instruction cache once per review even back to back (the review's code is
#     larger than that cache), so its code's size, not its instructions, is what a cold start
#     pays for;
#   on emptied caches (admit/applied_on_emptied_caches: 8 MiB written before each review, as a
#   TLS handshake and the kernel's network path leave a core's caches), the code lines and the
#   data lines read and written that come from beyond the second-level cache;
#   and the functions with the most code lines.
# Counts, not times: the same for the same binary whatever else the machine does.
#   bench/review_footprint.sh [FUNCTIONS]      (default 25 functions listed)
# MDADMIT_BENCH_BUILD_DIR is the build (default build-bench).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/admit_calls.sh
functions=${1:-25}
build=${MDADMIT_BENCH_BUILD_DIR:-build-bench}
command -v valgrind >/dev/null || {
    echo "valgrind is missing: tools/setup.sh --bench installs it" >&2
    exit 1
}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DMDADMIT_BUILD_TESTS=OFF -DMDADMIT_BUILD_BENCH=ON >/dev/null
cmake --build "$build" -j "$(nproc)" --target mdadmit_engine_bench >/dev/null

# SIZE,WAYS,LINE of the cache of LEVEL and TYPE (Data, Instruction, Unified) of CPU 0.
geometry() {
    local level=$1 type=$2
    for index in /sys/devices/system/cpu/cpu0/cache/index*; do
        if [[ $(<"$index/level") == "$level" && $(<"$index/type") == "$type" ]]; then
            local size
            size=$(<"$index/size")
            echo "$((${size%K} * 1024)),$(<"$index/ways_of_associativity"),$(<"$index/coherency_line_size")"
            return
        fi
    done
    echo "no level $level $type cache in /sys/devices/system/cpu/cpu0/cache" >&2
    exit 1
}
caches=(--I1="$(geometry 1 Instruction)" --D1="$(geometry 1 Data)" --LL="$(geometry 2 Unified)")

out=$(mktemp)
trap 'rm -f "$out"' EXIT
# Runs one benchmark under the simulation; the profile is left in $out, the calls of
# Admission::admit in $calls (the benchmark calls it once per iteration).
simulate() {
    rm -f "$out"
    valgrind --tool=callgrind --cache-sim=yes "${caches[@]}" \
        --toggle-collect='mdadmit::admission::Admission::admit*' --callgrind-out-file="$out" \
        "$build/bench/mdadmit_engine_bench" --benchmark_filter="^admit/$1(/manual_time)?\$" \
        --benchmark_min_time=0.05 >/dev/null 2>&1 || {
        echo "callgrind failed on admit/$1" >&2
        exit 1
    }
    calls=$(admit_calls "$out")
    if ((${calls:-0} == 0)); then
        echo "no call of Admission::admit counted in admit/$1: inlined into the benchmark?" >&2
        exit 1
    fi
}
# callgrind_annotate's rows as "Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw FUNCTION": its shares
# ("(12.3%)") left out, "." (none) as 0, thousands without commas; the program's totals are
# the function "TOTALS".
rows() {
    callgrind_annotate "$@" "$out" | awk '
        /PROGRAM TOTALS|\?\?\?:|^ *[0-9.,]+ .*:/ {
            line = $0
            gsub(/\( *[0-9.]+%\)/, "", line)
            n = split(line, f, " +")
            start = f[1] == "" ? 2 : 1
            if (n - start + 1 < 10) next
            out = ""
            for (i = start; i < start + 9; i++) { v = f[i]; gsub(",", "", v); out = out (v == "." ? 0 : v) " " }
            name = line; sub(/^.*(\?\?\?|\.[a-zA-Z]+):/, "", name)
            gsub(/\(anonymous namespace\)/, "{anonymous}", name); sub(/\(.*$/, "", name)
            if (line ~ /PROGRAM TOTALS/) name = "TOTALS"
            print out name
        }'
}

echo "caches simulated: ${caches[*]}"
simulate applied_on_a_cluster
read -r ir _ _ i1mr _ < <(rows | awk '$NF == "TOTALS"')
printf 'admit/applied_on_a_cluster, back to back: %d instructions, %d code lines per review\n' \
    $((ir / calls)) $((i1mr / calls))
echo "functions with the most code lines per review:"
rows --sort=I1mr | awk -v calls="$calls" -v most="$functions" '
    $NF != "TOTALS" && printed < most {
        name = $0
        for (i = 0; i < 9; i++) sub(/^[^ ]+ /, "", name)  # mawk has no {9}
        printf "  %5.0f  %s\n", $4 / calls, substr(name, 1, 100); printed++
    }'
simulate applied_on_emptied_caches
read -r _ _ _ _ _ _ ilmr dlmr dlmw _ < <(rows | awk '$NF == "TOTALS"')
printf 'admit/applied_on_emptied_caches: from beyond the second-level cache per review, %d code lines, %d data lines read, %d written\n' \
    $((ilmr / calls)) $((dlmr / calls)) $((dlmw / calls))
