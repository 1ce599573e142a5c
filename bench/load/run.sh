#!/usr/bin/env bash
# Load benchmark: mdadmit-webhook against two references on loopback, with the same
# certificate (ECDSA P-256) and the same review:
#   nginx returning the webhook's own answer as a fixed body over TLS (the limit: it parses
#   nothing), and
#   a Go net/http + encoding/json webhook (bench/load/go-webhook, what most webhooks are built
#   on; built when `go` is present, skipped otherwise).
# Three loads, each driven by wrk: keep-alive at 16 and at 256 connections, and a new TLS
# connection per request (Connection: close) 16 at a time, as kube-apiserver opens them after a
# rollout, each a full handshake as kube-apiserver makes it (wrk offers its last session, but no
# server here resumes one). The servers take turns within each load, in alternating order,
# ROUNDS times; the table gives requests/s, p50 and p99 of each run and our ratio to each
# reference.
# One more row, "transport", is our webhook with the same body posted to /healthz: it reads the
# request and answers 405 without a review, so ours/transport is what the review costs and
# transport/nginx is what TLS, HTTP and the event loop cost against nginx's.
#   bench/load/run.sh [SECONDS] [ROUNDS]      (default 10 s per run, 1 round)
# MDADMIT_BENCH_PIN=1 gives each server one thread (one nginx worker, GOMAXPROCS=1) pinned to
# CPU 1 and wrk one thread pinned to CPU 0. MDADMIT_BENCH_CASE picks the review (prepare.sh).
# MDADMIT_BENCH_LOADS picks loads, comma-separated (e.g. "new connection 16" for that one alone).
# With more than one round, a second table gives the median over the rounds of each round's
# ratio. "client" is the share of its threads' CPU that wrk used: near 1.00 the client, not the
# server, set the pace (wrk -t1 does on new connections, whose client side of the handshake
# costs more than the server's), and the server's cost shows through only as what it takes from
# the client's cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
duration=${1:-10}
rounds=${2:-1}
source bench/load/prepare.sh
server_cpu=()
client_cpu=()
if [[ ${MDADMIT_BENCH_PIN:-0} == 1 ]]; then
    threads=1
    server_cpu=(taskset -c 1)
    client_cpu=(taskset -c 0)
fi
case=$bench_case
IFS=, read -ra loads <<<"${MDADMIT_BENCH_LOADS:-keep-alive 16,keep-alive 256,new connection 16}"
declare -A ports=([ours]=18443 [nginx]=18444 [go]=18445)
require_free_ports "${ports[@]}"
ports[transport]=${ports[ours]}
declare -A paths=([transport]=/healthz)

"${server_cpu[@]}" "$build/server/mdadmit-webhook" --cert-file "$work/tls.crt" --key-file "$work/tls.key" \
    --listen "127.0.0.1:${ports[ours]}" --health-listen off --threads "$threads" \
    --instance-types bench/data/instance-types.yaml --log-level "${MDADMIT_BENCH_LOG_LEVEL:-warn}" 2>"$work/webhook.log" &
webhook_pid=$!
pids+=("$webhook_pid")
await_answer 50 "https://localhost:${ports[ours]}/healthz"
answer=$(curl -sf --cacert "$work/ca.crt" -H 'Content-Type: application/json' --data-binary "@$body" \
    "https://localhost:${ports[ours]}/validate")

write_nginx_conf "$threads" "${ports[nginx]}" "$answer"
"${server_cpu[@]}" nginx -c "$work/nginx.conf" -e "$work/nginx-error.log" &
pids+=($!)

servers=(ours transport nginx)
if command -v go >/dev/null; then
    (cd bench/load/go-webhook && GOFLAGS=-mod=mod go build -o "$work/go-webhook" .)
    "${server_cpu[@]}" "$work/go-webhook" -cert "$work/tls.crt" -key "$work/tls.key" \
        -listen "127.0.0.1:${ports[go]}" -threads "$threads" 2>"$work/go.log" &
    pids+=($!)
    servers+=(go)
else
    echo "go not found: the Go reference is skipped (tools/setup.sh --bench installs it)" >&2
fi
sleep 0.5
# Each server answers the review as the load will send it: the transport row's path with 405.
for server in "${servers[@]}"; do
    if [[ -n ${paths[$server]:-} ]]; then
        status=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$work/ca.crt" \
            -H 'Content-Type: application/json' --data-binary "@$body" \
            "https://localhost:${ports[$server]}${paths[$server]}" || true)
        if [[ $status != 405 ]]; then
            echo "POST ${paths[$server]} answered $status, not 405: the $server row would not measure the transport" >&2
            exit 1
        fi
        continue
    fi
    curl -sf --cacert "$work/ca.crt" -H 'Content-Type: application/json' --data-binary "@$body" \
        "https://localhost:${ports[$server]}/validate?case=$case" | grep -q '"allowed"'
done

# wrk counts answers other than 2xx and 3xx together: the transport row's are all 405, so
# there an error is fewer of them than requests (a 2xx, or a connection error).
run_wrk() {
    local server=$1 connections=$2 close=$3
    local wrk_threads=$((connections < threads ? connections : threads))
    local TIMEFORMAT='%U %S %R'
    {
        time MDADMIT_BODY=$body MDADMIT_CASE=$case MDADMIT_CLOSE=$close \
            MDADMIT_PATH=${paths[$server]:-} "${client_cpu[@]}" \
            wrk -t "$wrk_threads" -c "$connections" -d "${duration}s" --latency \
            -s bench/load/post.lua "https://localhost:${ports[$server]}" >"$work/wrk.out"
    } 2>"$work/wrk.time"
    local rps p50 p99 requests non2xx errors="" client
    read -r rps p50 p99 requests non2xx < <(wrk_numbers <"$work/wrk.out")
    client=$(awk -v threads="$wrk_threads" '{ printf "%.2f", ($1 + $2) / $3 / threads }' "$work/wrk.time")
    if [[ $server == transport ]]; then
        ((non2xx == requests)) || errors=" ERRORS: $non2xx of $requests answers were not 405"
    elif ((non2xx > 0)); then
        errors=" ERRORS: $non2xx answers were not 2xx or 3xx"
    fi
    echo "$rps $p50 $p99 $client$errors"
}

echo "case: $case ($(wc -c <"$body") bytes), threads: $threads, $duration s per run, $rounds round(s)"
printf '%-22s %-9s | %9s %8s %8s %7s\n' load server "req/s" "p50 ms" "p99 ms" client
declare -A total per_round
for load in "${loads[@]}"; do
    connections=${load##* }
    close=$([[ $load == new* ]] && echo 1 || echo 0)
    order=("${servers[@]}")
    for round in $(seq "$rounds"); do
        for server in "${order[@]}"; do
            read -r rps p50 p99 client errors < <(run_wrk "$server" "$connections" "$close")
            printf '%-22s %-9s | %9s %8s %8s %7s %s\n' "$load" "$server" "$rps" "$p50" "$p99" \
                "$client" "${errors:-}"
            total[$load/$server]=$(echo "${total[$load/$server]:-0} + $rps" | bc -l)
            per_round[$load/$server/$round]=$rps
        done
        # Alternate who goes first, so that neither always runs on a machine the other warmed.
        mapfile -t order < <(printf '%s\n' "${order[@]}" | tac)
    done
done
# A load's ratio of two servers: of their sums over the rounds, or the median of each round's
# ratio (a round in which the machine slowed for one server more than for another moves the
# median less than the sums; rounds differ by up to a quarter).
sum_ratio() {
    printf '%.2f' "$(echo "${total[$1/$2]} / ${total[$1/$3]}" | bc -l)"
}
median_ratio() {
    local load=$1 numerator=$2 denominator=$3
    for round in $(seq "$rounds"); do
        echo "${per_round[$load/$numerator/$round]} / ${per_round[$load/$denominator/$round]}" | bc -l
    done | sort -g | awk '{ v[NR] = $1 } END { printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio_table() {
    local ratio=$1
    printf '%-22s %12s %12s %16s %16s\n' load "ours/nginx" "ours/go" "transport/nginx" "ours/transport"
    for load in "${loads[@]}"; do
        local go_ratio=n/a
        if [[ -n ${total[$load/go]:-} ]]; then
            go_ratio=$("$ratio" "$load" ours go)
        fi
        printf '%-22s %12s %12s %16s %16s\n' "$load" "$("$ratio" "$load" ours nginx)" "$go_ratio" \
            "$("$ratio" "$load" transport nginx)" "$("$ratio" "$load" ours transport)"
    done
}
echo
ratio_table sum_ratio
if ((rounds > 1)); then
    echo
    echo "median over the rounds of each round's ratio:"
    ratio_table median_ratio
fi
echo "webhook peak RSS: $(awk '/VmHWM/ {print $2, $3}' "/proc/$webhook_pid/status")"
