#!/usr/bin/env bash
# Heap allocations per admitted keep-alive request in the running webhook, by who asks for
# them: the webhook's own code, or OpenSSL (its record buffers, which it releases while a
# connection is idle, and its record layer's bookkeeping). gdb stops the webhook at every
# malloc for SECONDS of wrk's keep-alive load on two connections, and counts the answers by
# SSL_write_ex, one per answer. The webhook runs many times slower meanwhile: this counts, it
# does not time. Prints the counts per answer by caller and size; exit 1 when the webhook's own
# code allocated on the request path (more than 0.05 per answer: what it allocates off that
# path, such as the certificate files' check every few seconds, stays below).
#   bench/load/allocations.sh [SECONDS]      (default 5; x86-64, needs permission to attach)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-5}
source bench/load/prepare.sh
require_free_ports 18443

"$build/server/mdadmit-webhook" --cert-file "$work/tls.crt" --key-file "$work/tls.key" \
    --listen 127.0.0.1:18443 --health-listen off --threads 1 \
    --instance-types bench/data/instance-types.yaml --log-level warn >/dev/null 2>&1 &
webhook_pid=$!
pids+=("$webhook_pid")
await_answer 50 https://localhost:18443/healthz
# Warm-up before gdb attaches: the first requests of a connection grow what it keeps.
MDADMIT_BODY=$body MDADMIT_CASE=$bench_case MDADMIT_CLOSE=0 MDADMIT_PATH= \
    wrk -t1 -c2 -d"$((seconds + 30))s" -s bench/load/post.lua https://localhost:18443 >/dev/null &
pids+=($!)
sleep 1

# Each stop prints its function and the callers up to the first frame outside libc and
# libstdc++ (operator new, std::string): that frame tells whose the allocation is.
cat >"$work/count.gdb" <<'EOF'
set pagination off
set width 0
set print frame-arguments none
set confirm off
break *malloc
commands
silent
printf "ALLOC %lu\n", $rdi
bt 6
continue
end
break SSL_write_ex
commands
silent
printf "ANSWER\n"
continue
end
continue
EOF
timeout -s INT "$seconds" gdb -q -p "$webhook_pid" -x "$work/count.gdb" </dev/null \
    >"$work/gdb.out" 2>&1 || true

awk '
    /^ALLOC / { size = $2; next }
    /^ANSWER/ { answers++; next }
    /^#[1-9]/ && size != "" {
        if ($0 ~ /from .*lib(c|stdc\+\+)\.so/) next
        owner = ($0 ~ /from .*lib(ssl|crypto)\.so/) ? "openssl" : "webhook"
        count[owner " " size]++
        total[owner]++
        size = ""
    }
    END {
        if (answers == 0) { print "no answers counted: did gdb attach?"; exit 2 }
        printf "answers: %d\n", answers
        for (key in count) {
            split(key, part, " ")
            printf "  %-8s %7d bytes  %.2f per answer\n", part[1], part[2], count[key] / answers | "sort -k1,1 -k2,2n"
        }
        close("sort -k1,1 -k2,2n")
        printf "per answer: webhook %.2f, openssl %.2f\n", total["webhook"] / answers,
            total["openssl"] / answers
        exit total["webhook"] / answers >= 0.05 ? 1 : 0
    }' "$work/gdb.out"
