#!/usr/bin/env bash
# A/B load benchmark: this checkout's mdadmit-webhook against another build of it (a
# baseline), over TLS on loopback, in alternating runs (which one runs first swaps every round)
# so that the noise of a shared machine falls on both alike. A load is a number of
# connections, keep-alive by default, with "new" for a new connection per request driven by
# wrk (which offers its last TLS session), or "api" for a new connection per request from a
# client configured as kube-apiserver's
# (load/apiserver-client: Go's TLS without a session cache; needs go). Prints requests/s, p99
# latency and the server's CPU time per request of each run, the ratios of the sums, and each
# server's peak RSS.
#   bench/load/compare.sh BASELINE_BINARY [SECONDS] [ROUNDS]   (default 6 s, 2 rounds)
# MDADMIT_COMPARE_LOADS picks the loads (default "1 16 256 16new"); MDADMIT_BENCH_CASE the
# review (prepare.sh).
# MDADMIT_COMPARE_MTLS=1 runs both servers with client certificates required (--client-ca-file:
# the CA that issued their own certificate, as one cluster CA would) and the apiserver client
# presenting one; only "api" loads then (wrk has no client certificate).
# A baseline binary of an earlier commit:
#   git worktree add /tmp/baseline <commit> &&
#   cmake -S /tmp/baseline -B /tmp/baseline-build -DCMAKE_BUILD_TYPE=Release \
#       -DMDADMIT_BUILD_TESTS=OFF && cmake --build /tmp/baseline-build --target mdadmit-webhook
set -euo pipefail
# A client that fails inside a command substitution stops the script too.
shopt -s inherit_errexit
cd "$(dirname "$0")/../.."
baseline=${1:?usage: bench/load/compare.sh BASELINE_BINARY [SECONDS] [ROUNDS]}
duration=${2:-6}
rounds=${3:-2}
source bench/load/prepare.sh
require_free_ports 18443 18445
loads=${MDADMIT_COMPARE_LOADS:-1 16 256 16new}
server_mtls=()
client_mtls=()
curl_mtls=()
if [[ ${MDADMIT_COMPARE_MTLS:-0} == 1 ]]; then
    for load in $loads; do
        if [[ $load != *api ]]; then
            echo "MDADMIT_COMPARE_MTLS=1 takes only api loads (wrk has no client certificate): $load" >&2
            exit 1
        fi
    done
    openssl ecparam -name prime256v1 -genkey -noout -out "$work/client.key"
    openssl req -new -key "$work/client.key" -subj "/CN=kube-apiserver" -out "$work/client.csr"
    printf 'extendedKeyUsage=clientAuth\n' >"$work/client.ext"
    openssl x509 -req -in "$work/client.csr" -CA "$work/ca.crt" -CAkey "$work/ca.key" \
        -CAcreateserial -days 1 -extfile "$work/client.ext" -out "$work/client.crt" 2>/dev/null
    server_mtls=(--client-ca-file "$work/ca.crt")
    client_mtls=(-cert "$work/client.crt" -key "$work/client.key")
    curl_mtls=(--cert "$work/client.crt" --key "$work/client.key")
fi
start() {
    "$1" --cert-file "$work/tls.crt" --key-file "$work/tls.key" --listen "127.0.0.1:$2" \
        "${server_mtls[@]}" --health-listen off --threads "$threads" \
        --instance-types bench/data/instance-types.yaml --log-level warn >/dev/null 2>&1 &
    pids+=($!)
}
start "$build/server/mdadmit-webhook" 18443
current_pid=${pids[0]}
start "$baseline" 18445
baseline_pid=${pids[1]}
for port in 18443 18445; do
    await_answer 50 "${curl_mtls[@]}" "https://localhost:$port/healthz"
done

if [[ $loads == *api* ]]; then
    (cd bench/load/apiserver-client && GOFLAGS=-mod=mod go build -o "$work/apiserver-client" .)
fi

# The user and system time of process $1 so far, in clock ticks (fields 14 and 15 of its stat,
# counted after the name in parentheses, which may hold spaces).
cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }

# One run of load $2 against the server on port $1 (pid $3): requests/s, p99 in ms, and the
# server's CPU time per request in microseconds. A client that fails (the apiserver client
# exits 1 when a review is not answered 200) stops the comparison.
run_load() {
    local port=$1 load=$2 pid=$3
    local before out rps p99 requests
    before=$(cpu_ticks "$pid")
    if [[ $load == *api ]]; then
        out=$("$work/apiserver-client" -url "https://localhost:$port/validate" \
            -ca "$work/ca.crt" "${client_mtls[@]}" -body "$body" -c "${load%api}" -duration "${duration}s")
        read -r rps _ p99 requests <<<"$out"
    else
        local connections=${load%new}
        out=$(MDADMIT_BODY=$body MDADMIT_CASE=$bench_case \
            MDADMIT_CLOSE=$([[ $load == *new ]] && echo 1 || echo 0) \
            wrk -t $((connections < threads ? connections : threads)) -c "$connections" -d "${duration}s" \
            --latency -s bench/load/post.lua "https://localhost:$port" | wrk_numbers)
        read -r rps _ p99 requests _ <<<"$out"
    fi
    if ((requests == 0)); then
        echo "load $load on port $port: no request answered" >&2
        return 1
    fi
    printf '%s %s %.1f\n' "$rps" "$p99" \
        "$(echo "($(cpu_ticks "$pid") - $before) * 1000000 / $(getconf CLK_TCK) / $requests" | bc -l)"
}

printf '%-6s %7s | %10s %8s %9s | %10s %8s %9s\n' round load "this rps" "p99 ms" "cpu us/rq" \
    "base rps" "p99 ms" "cpu us/rq"
declare -A current_sum baseline_sum current_cpu baseline_cpu
for round in $(seq "$rounds"); do
    for load in $loads; do
        # Each round swaps which server runs first, so that what one run leaves behind (sockets
        # in TIME_WAIT after new connections, a warmer cache) does not fall on one server only.
        if ((round % 2)); then
            current=$(run_load 18443 "$load" "$current_pid")
            baseline=$(run_load 18445 "$load" "$baseline_pid")
        else
            baseline=$(run_load 18445 "$load" "$baseline_pid")
            current=$(run_load 18443 "$load" "$current_pid")
        fi
        read -r current_rps current_p99 current_us <<<"$current"
        read -r baseline_rps baseline_p99 baseline_us <<<"$baseline"
        current_sum[$load]=$((${current_sum[$load]:-0} + current_rps))
        baseline_sum[$load]=$((${baseline_sum[$load]:-0} + baseline_rps))
        current_cpu[$load]=$(echo "${current_cpu[$load]:-0} + $current_us" | bc -l)
        baseline_cpu[$load]=$(echo "${baseline_cpu[$load]:-0} + $baseline_us" | bc -l)
        printf '%-6s %7s | %10s %8s %9s | %10s %8s %9s\n' "$round" "$load" "$current_rps" "$current_p99" \
            "$current_us" "$baseline_rps" "$baseline_p99" "$baseline_us"
    done
done
for load in $loads; do
    printf 'load %7s: this / baseline throughput %.2f, CPU per request %.2f\n' "$load" \
        "$(echo "${current_sum[$load]} / ${baseline_sum[$load]}" | bc -l)" \
        "$(echo "${current_cpu[$load]} / ${baseline_cpu[$load]}" | bc -l)"
done
echo "peak RSS: this $(awk '/VmHWM/ {print $2, $3}' "/proc/$current_pid/status"), baseline $(awk '/VmHWM/ {print $2, $3}' "/proc/$baseline_pid/status")"
