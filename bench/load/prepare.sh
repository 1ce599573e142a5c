# Sourced by the load benchmarks, from the repository's root: installs the load tools, builds
# this checkout's webhook in Release into $build, makes development certificates in $work,
# and on exit stops every process whose pid is in $pids and removes $work.
tools/setup.sh --bench >/dev/null
build=${MDADMIT_BENCH_BUILD_DIR:-build-bench}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DMDADMIT_BUILD_TESTS=OFF -DMDADMIT_BUILD_BENCH=ON >/dev/null
cmake --build "$build" -j "$(nproc)" --target mdadmit-webhook >/dev/null

work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
certs/dev-certs.sh "$work" >/dev/null
threads=$(nproc)

# The review the loads send (MDADMIT_BENCH_CASE): "applied" (the default), a ModelDeployment's
# CREATE by kubectl apply as kube-apiserver sends it (compact JSON, the last applied form in an
# annotation, managedFields); "allowed", the same object pretty-printed with a placeholder
# annotation (the review of the runs before 2026-12-07); or "denied".
bench_case=${MDADMIT_BENCH_CASE:-applied}
case $bench_case in
    applied) body=bench/data/review-applied.json ;;
    allowed) body=bench/data/review-allowed.json ;;
    denied) body=examples/review-denied.json ;;
    *)
        echo "MDADMIT_BENCH_CASE is applied, allowed or denied, not $bench_case" >&2
        exit 1
        ;;
esac

# The servers bind with SO_REUSEPORT: a process left listening on a port would silently take a
# share of the connections, so a port in use stops the benchmark.
require_free_ports() {
    for port in "$@"; do
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "port $port is already in use on 127.0.0.1; stop what listens there" >&2
            exit 1
        fi
    done
}

# Waits until a server answers `curl -sf` (with this run's CA) given ARGS, its URL and options,
# trying every 0.1 s up to TRIES times; a server that never answers shows in what follows.
await_answer() {
    local tries=$1
    shift
    for _ in $(seq "$tries"); do
        curl -sf -o /dev/null --cacert "$work/ca.crt" "$@" && return
        sleep 0.1
    done
}

# The numbers of a `wrk --latency` report on stdin: requests/s, p50 and p99 in ms, the requests
# answered, and how many answers were other than 2xx and 3xx.
wrk_numbers() {
    awk 'function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /s$/) return v * 1000; return v }
         /^ +50%/ { p50 = ms($2) } /^ +99%/ { p99 = ms($2) } /^Requests\/sec/ { rps = $2 }
         / requests in / { requests = $1 } /Non-2xx/ { non2xx = $NF }
         END { printf "%.0f %.3f %.3f %d %d\n", rps, p50, p99, requests, non2xx }'
}

# Writes $work/nginx.conf: nginx with WORKERS worker processes on PORT, answering every review
# with ANSWER (the webhook's own answer to it, as a fixed body).
write_nginx_conf() {
    local workers=$1 port=$2 answer=$3 quoted
    if [[ $answer == *'$'* ]]; then
        echo "the answer holds a \$, which nginx would read as a variable" >&2
        return 1
    fi
    # In a quoted string nginx reads a backslash and a quote as escapes; in a replacement sed
    # reads a backslash, & and the delimiter.
    quoted=$(sed -e "s/[\\\\']/\\\\&/g" -e 's/[\\&|]/\\&/g' <<<"$answer")
    sed -e "s|@WORKERS@|$workers|; s|@DIR@|$work|g; s|@PORT@|$port|" \
        -e "s|@ALLOWED@|$quoted|" -e "s|@DENIED@|$quoted|" \
        bench/load/nginx.conf.in >"$work/nginx.conf"
}
