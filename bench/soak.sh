#!/usr/bin/env bash
# Soak: the webhook under mixed traffic (allowed, denied and malformed reviews, and Pods on
# /mutate) at 16 keep-alive connections for MINUTES, its serving certificate rotated every 30 s
# the way the kubelet updates a Secret volume. Prints, each minute, resident memory, open file
# descriptors, requests answered and errors (5xx, panics, refused certificate reloads).
# Not part of CI.
#   bench/soak.sh [MINUTES]      (default 10)
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-10}
source bench/load/prepare.sh
port=18453
health=18454

# The certificate behind a `..data` symlink, as in a Secret volume.
rotate() {
    local next="$work/secret/..$(date +%s%N)"
    mkdir -p "$next"
    certs/dev-certs.sh "$next" >/dev/null
    ln -sfn "$(basename "$next")" "$work/secret/..data.tmp"
    mv -T "$work/secret/..data.tmp" "$work/secret/..data"
}
mkdir -p "$work/secret"
rotate
ln -s ..data/tls.crt "$work/secret/tls.crt"
ln -s ..data/tls.key "$work/secret/tls.key"

cp bench/data/review-allowed.json "$work/allowed.json"
cp examples/review-denied.json "$work/denied.json"
cat >"$work/deployment.yaml" <<'YAML'
apiVersion: worker.gpustack.ai/v1
kind: ModelDeployment
metadata: {name: chat, namespace: soak}
spec:
  model: {name: m}
  engine: {name: vLLM, version: 0.11.0}
  router: {name: vllm-router}
  roles:
  - {name: serve, replicas: 4, size: 2, extraArgs: [--data-parallel-size, "2"]}
YAML
cat >"$work/pod.json" <<'JSON'
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"pod","kind":{"group":"","version":"v1","kind":"Pod"},"operation":"CREATE","namespace":"soak","object":{"metadata":{"labels":{"app.kubernetes.io/name":"model-deployment","app.kubernetes.io/instance":"chat","app.kubernetes.io/component":"serve","modeldeployment.gpustack.ai/member-index":"0"}},"spec":{"containers":[{"name":"engine"}]}}}}
JSON

"$build/server/mdadmit-webhook" --cert-file "$work/secret/tls.crt" --key-file "$work/secret/tls.key" \
    --listen "127.0.0.1:$port" --health-listen "127.0.0.1:$health" --threads "$threads" \
    --cluster-files "$work/deployment.yaml" --log-level error 2>"$work/webhook.log" &
webhook=$!
pids+=("$webhook")
for _ in $(seq 50); do
    curl -sf "http://127.0.0.1:$health/readyz" >/dev/null && break
    sleep 0.1
done

MDADMIT_SOAK_DIR=$work wrk -t1 -c16 -d"${minutes}m" -s bench/load/soak.lua \
    "https://localhost:$port" >"$work/wrk.txt" 2>&1 &
pids+=($!)

metric() {  # the sum of a metric's samples whose line matches the pattern
    curl -sf "http://127.0.0.1:$health/metrics" | awk -v p="$1" '$0 ~ p && $0 !~ /^#/ {s += $NF} END {print s + 0}'
}
printf '%-6s %10s %6s %12s %6s %7s %14s\n' minute rss_kib fds requests 5xx panics reload_errors
for minute in $(seq "$minutes"); do
    for _ in 1 2; do
        sleep 30
        rotate
    done
    rss=$(awk '/VmRSS/ {print $2}' "/proc/$webhook/status")
    fds=$(find "/proc/$webhook/fd" -mindepth 1 | wc -l)
    printf '%-6s %10s %6s %12s %6s %7s %14s\n' "$minute" "$rss" "$fds" \
        "$(metric '^mdadmit_requests_total')" "$(metric '^mdadmit_requests_total.*code="5')" \
        "$(metric '^mdadmit_panics_total')" "$(metric '^mdadmit_certificate_reload_errors_total')"
done
echo "certificate reloads: $(metric '^mdadmit_certificate_reloads_total')"
grep -E "Requests/sec|Non-2xx|Socket errors" "$work/wrk.txt" || true
