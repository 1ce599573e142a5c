#!/usr/bin/env bash
# A/B load benchmark: this checkout's mdadmit-webhook against another build of it (a
# baseline), over TLS on loopback, keep-alive at 1, 16 and 256 connections and a new connection
# per request 16 at a time ("16new"), driven by wrk in alternating runs so that the noise of a
# shared machine falls on both alike. Prints requests/s and p99 latency per
# run, the ratio of the means, and each server's peak RSS.
#   bench/load/compare.sh BASELINE_BINARY [SECONDS] [ROUNDS]   (default 6 s, 2 rounds)
# MDADMIT_COMPARE_LOADS picks the loads (default "1 16 256 16new").
# A baseline binary of an earlier commit:
#   git worktree add /tmp/baseline <commit> &&
#   cmake -S /tmp/baseline -B /tmp/baseline-build -DCMAKE_BUILD_TYPE=Release \
#       -DMDADMIT_BUILD_TESTS=OFF && cmake --build /tmp/baseline-build --target mdadmit-webhook
set -euo pipefail
cd "$(dirname "$0")/../.."
baseline=${1:?usage: bench/load/compare.sh BASELINE_BINARY [SECONDS] [ROUNDS]}
duration=${2:-6}
rounds=${3:-2}
source bench/load/prepare.sh
require_free_ports 18443 18445

start() {
    "$1" --cert-file "$work/tls.crt" --key-file "$work/tls.key" --listen "127.0.0.1:$2" \
        --health-listen off --threads "$threads" --log-level warn >/dev/null 2>&1 &
    pids+=($!)
}
start "$build/server/mdadmit-webhook" 18443
current_pid=${pids[0]}
start "$baseline" 18445
baseline_pid=${pids[1]}
for port in 18443 18445; do
    for _ in $(seq 50); do
        curl -sf --cacert "$work/ca.crt" "https://localhost:$port/healthz" >/dev/null && break
        sleep 0.1
    done
done

run_wrk() {
    local port=$1 load=$2
    local connections=${load%new}
    MDADMIT_BODY=bench/data/review-allowed.json MDADMIT_CASE=allowed \
        MDADMIT_CLOSE=$([[ $load == *new ]] && echo 1 || echo 0) \
        wrk -t $((connections < threads ? connections : threads)) -c "$connections" -d "${duration}s" \
        --latency -s bench/load/post.lua "https://localhost:$port" |
        awk 'function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /s$/) return v * 1000; return v }
             /^ +99%/ { p99 = ms($2) } /^Requests\/sec/ { rps = $2 } END { printf "%.0f %.3f\n", rps, p99 }'
}

printf '%-6s %5s | %10s %8s | %10s %8s\n' round conns "this rps" "p99 ms" "base rps" "p99 ms"
declare -A current_sum baseline_sum
for round in $(seq "$rounds"); do
    for connections in ${MDADMIT_COMPARE_LOADS:-1 16 256 16new}; do
        read -r current_rps current_p99 < <(run_wrk 18443 "$connections")
        read -r baseline_rps baseline_p99 < <(run_wrk 18445 "$connections")
        current_sum[$connections]=$((${current_sum[$connections]:-0} + current_rps))
        baseline_sum[$connections]=$((${baseline_sum[$connections]:-0} + baseline_rps))
        printf '%-6s %5s | %10s %8s | %10s %8s\n' "$round" "$connections" "$current_rps" "$current_p99" \
            "$baseline_rps" "$baseline_p99"
    done
done
for connections in ${MDADMIT_COMPARE_LOADS:-1 16 256 16new}; do
    printf 'conns %5s: this / baseline throughput %.2f\n' "$connections" \
        "$(echo "${current_sum[$connections]} / ${baseline_sum[$connections]}" | bc -l)"
done
echo "peak RSS: this $(awk '/VmHWM/ {print $2, $3}' "/proc/$current_pid/status"), baseline $(awk '/VmHWM/ {print $2, $3}' "/proc/$baseline_pid/status")"
