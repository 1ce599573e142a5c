#!/usr/bin/env bash
# Load benchmark: mdadmit-webhook against nginx returning a fixed AdmissionReview, both over
# TLS keep-alive on loopback, driven by wrk at 1, 16 and 256 connections, for an allowed and
# a denied review. Prints requests/s, p50 and p99 latency, our throughput as a ratio of
# nginx's, and the webhook's peak RSS.
#   bench/load/run.sh [SECONDS]      (default 10 s per run)
# MDADMIT_BENCH_PIN=1 gives each server one thread (one nginx worker) pinned to CPU 1 and
# wrk one thread pinned to CPU 0, so that latency is measured without the load generator
# competing for the server's core.
set -euo pipefail
cd "$(dirname "$0")/../.."
duration=${1:-10}
source bench/load/prepare.sh
server_cpu=()
client_cpu=()
if [[ ${MDADMIT_BENCH_PIN:-0} == 1 ]]; then
    threads=1
    server_cpu=(taskset -c 1)
    client_cpu=(taskset -c 0)
fi
webhook_port=18443
nginx_port=18444

"${server_cpu[@]}" "$build/server/mdadmit-webhook" --cert-file "$work/tls.crt" --key-file "$work/tls.key" \
    --listen "127.0.0.1:$webhook_port" --health-listen off --threads "$threads" \
    --log-level "${MDADMIT_BENCH_LOG_LEVEL:-warn}" 2>"$work/webhook.log" &
webhook_pid=$!
pids+=("$webhook_pid")

allowed=bench/data/review-allowed.json
denied=examples/review-denied.json
for _ in $(seq 50); do
    curl -sf --cacert "$work/ca.crt" "https://localhost:$webhook_port/healthz" >/dev/null && break
    sleep 0.1
done
answer() {
    curl -sf --cacert "$work/ca.crt" -H 'Content-Type: application/json' --data-binary "@$1" \
        "https://localhost:$webhook_port/validate"
}
allowed_answer=$(answer "$allowed")
denied_answer=$(answer "$denied")
grep -q '"allowed":true' <<<"$allowed_answer"
grep -q '"allowed":false' <<<"$denied_answer"

escape_sed() { sed -e 's/[\/&|]/\\&/g' <<<"$1"; }
sed -e "s|@WORKERS@|$threads|; s|@DIR@|$work|g; s|@PORT@|$nginx_port|" \
    -e "s|@ALLOWED@|$(escape_sed "$allowed_answer")|" -e "s|@DENIED@|$(escape_sed "$denied_answer")|" \
    bench/load/nginx.conf.in >"$work/nginx.conf"
"${server_cpu[@]}" nginx -c "$work/nginx.conf" -e "$work/nginx-error.log" &
pids+=($!)
sleep 0.5
[[ "$(curl -sk -H 'Content-Type: application/json' --data-binary "@$allowed" \
    "https://localhost:$nginx_port/validate?case=allowed")" == "$allowed_answer" ]]

# wrk's summary: requests/s, and the 50% and 99% lines of --latency, converted to ms.
run_wrk() {
    local port=$1 case=$2 body=$3 connections=$4
    local wrk_threads=$((connections < threads ? connections : threads))
    MDADMIT_BODY=$body MDADMIT_CASE=$case "${client_cpu[@]}" wrk -t "$wrk_threads" -c "$connections" -d "${duration}s" \
        --latency -s bench/load/post.lua "https://localhost:$port" >"$work/wrk.out"
    awk '
        function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /s$/) return v * 1000; return v }
        /^ +50%/ { p50 = ms($2) } /^ +99%/ { p99 = ms($2) } /^Requests\/sec/ { rps = $2 }
        /Non-2xx|Socket errors/ { errors = errors " " $0 }
        END { printf "%.0f %.3f %.3f%s\n", rps, p50, p99, (errors == "" ? "" : " ERRORS:" errors) }' "$work/wrk.out"
}

printf '%-8s %5s | %10s %8s %8s | %10s %8s %8s | %6s\n' case conns "ours rps" "p50 ms" "p99 ms" \
    "nginx rps" "p50 ms" "p99 ms" ratio
for case in allowed denied; do
    body=$([[ $case == allowed ]] && echo "$allowed" || echo "$denied")
    for connections in 1 16 256; do
        read -r ours_rps ours_p50 ours_p99 ours_errors < <(run_wrk "$webhook_port" "$case" "$body" "$connections")
        read -r ref_rps ref_p50 ref_p99 ref_errors < <(run_wrk "$nginx_port" "$case" "$body" "$connections")
        printf '%-8s %5s | %10s %8s %8s | %10s %8s %8s | %6.2f %s %s\n' "$case" "$connections" "$ours_rps" \
            "$ours_p50" "$ours_p99" "$ref_rps" "$ref_p50" "$ref_p99" "$(echo "$ours_rps / $ref_rps" | bc -l)" \
            "${ours_errors:-}" "${ref_errors:-}"
    done
done
echo "webhook peak RSS: $(awk '/VmHWM/ {print $2, $3}' "/proc/$webhook_pid/status")"
