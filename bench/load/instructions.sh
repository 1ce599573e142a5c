#!/usr/bin/env bash
# Instructions one more request costs each server in user space, counted by valgrind's callgrind:
# ours (/validate), its transport alone (the same body posted to /healthz, answered 405) and nginx
# answering the webhook's own answer as a fixed body, each with one thread (one worker), the same
# certificate and review as bench/load/run.sh. A count does not move with a shared machine's
# noise, so a change of a few percent to the whole request path shows where run.sh's requests/s
# cannot tell it. It is not a time: the kernel's work (the socket calls, the scheduler) is not
# counted, nor cache misses, and a `rep` string instruction counts once per byte (glibc's memset
# and memcpy of a few KB, such as Beast's copy of the body, weigh more here than in time).
#   bench/load/instructions.sh [SECONDS]      (default 4)
# Each server runs twice under callgrind, wrk -t1 -c16 sending reviews for SECONDS and then for
# three times as long; the difference of the instructions of the two runs over the difference of
# their requests is the cost of a request: the start-up, the probes and the 16 connections'
# handshakes, the same in both runs, fall out. MDADMIT_INSTRUCTIONS_LOAD=new sends each request on
# a new TLS connection (Connection: close), whose handshake then is the request's.
# MDADMIT_BENCH_CASE picks the review (prepare.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-4}
load=${MDADMIT_INSTRUCTIONS_LOAD:-keep-alive}
case $load in
    keep-alive) close=0 ;;
    new) close=1 ;;
    *)
        echo "MDADMIT_INSTRUCTIONS_LOAD is keep-alive or new, not $load" >&2
        exit 1
        ;;
esac
source bench/load/prepare.sh
command -v valgrind >/dev/null || {
    echo "valgrind is missing: tools/setup.sh --bench installs it" >&2
    exit 1
}
port=18443
require_free_ports "$port"
# nginx's worker runs as another user (nobody, when started by root) and writes its own counts:
# it may pass through the work directory (whose keys stay readable by their owner alone).
chmod 711 "$work"
counts="$work/counts"
mkdir -m 1777 "$counts"

webhook=("$build/server/mdadmit-webhook" --cert-file "$work/tls.crt" --key-file "$work/tls.key"
    --listen "127.0.0.1:$port" --health-listen off --threads 1
    --instance-types bench/data/instance-types.yaml --log-level warn)
start_webhook() {
    valgrind --tool=callgrind --callgrind-out-file="$counts/$1.%p" "${webhook[@]}" 2>>"$work/webhook.log" &
}
start_nginx() {
    valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$counts/$1.%p" \
        nginx -c "$work/nginx.conf" -e "$work/nginx-error.log" 2>>"$work/nginx.log" &
}

# One run of `server`: sets run_instructions (all its processes and threads, from start-up to
# exit) and run_requests (the requests wrk had answered).
run_once() {
    local server=$1 duration=$2 path=/validate stop=TERM
    local run="$server.$duration"
    if [[ $server == transport ]]; then
        path=/healthz
    fi
    if [[ $server == nginx ]]; then
        start_nginx "$run"
        stop=QUIT
    else
        start_webhook "$run"
    fi
    local pid=$!
    pids+=("$pid")
    # nginx answers /validate alone; under valgrind a server takes seconds to start.
    await_answer 300 -H 'Content-Type: application/json' --data-binary "@$body" \
        "https://localhost:$port/validate"
    run_requests=$(MDADMIT_BODY=$body MDADMIT_CASE=$bench_case MDADMIT_CLOSE=$close \
        MDADMIT_PATH=$path wrk -t1 -c16 -d "${duration}s" -s bench/load/post.lua \
        "https://localhost:$port" | awk '/ requests in / { print $1 }')
    # Each process writes its counts as it exits; nginx's master exits after its worker.
    kill -"$stop" "$pid"
    wait "$pid" || true
    run_instructions=$(for out in "$counts/$run".*; do
        callgrind_annotate "$out" | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
    done | awk '{ sum += $1 } END { printf "%.0f\n", sum }')
}

# The answer nginx gives: the webhook's own, taken from a plain run of it.
"${webhook[@]}" 2>>"$work/webhook.log" &
answering=$!
pids+=("$answering")
await_answer 50 "https://localhost:$port/healthz"
answer=$(curl -sf --cacert "$work/ca.crt" -H 'Content-Type: application/json' --data-binary "@$body" \
    "https://localhost:$port/validate")
kill "$answering"
wait "$answering" || true
write_nginx_conf 1 "$port" "$answer"
mkdir -p "$work/body"

echo "load: $load, 16 connections; review: $bench_case ($(wc -c <"$body") bytes); runs of $seconds s and $((3 * seconds)) s"
printf '%-10s %10s %10s %24s\n' server requests "" "instructions per request"
declare -A per_request
for server in ours transport nginx; do
    run_once "$server" "$seconds"
    short_instructions=$run_instructions short_requests=$run_requests
    run_once "$server" $((3 * seconds))
    long_instructions=$run_instructions long_requests=$run_requests
    if ((long_requests <= short_requests)); then
        echo "$server answered no more requests in the longer run ($short_requests, $long_requests)" >&2
        exit 1
    fi
    per_request[$server]=$(((long_instructions - short_instructions) / (long_requests - short_requests)))
    printf '%-10s %10s %10s %24s\n' "$server" "$short_requests" "$long_requests" "${per_request[$server]}"
done
ratio() { printf '%.2f' "$(echo "${per_request[$1]} / ${per_request[$2]}" | bc -l)"; }
echo "ours/nginx $(ratio ours nginx), transport/nginx $(ratio transport nginx)," \
    "the review (ours - transport): $((per_request[ours] - per_request[transport]))"
