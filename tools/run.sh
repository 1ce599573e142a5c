#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds mdadmit (release), makes development certificates
# (certs/dev/), and runs the webhook on localhost: admission over TLS on 8443, health and
# metrics on 8080. Extra arguments are passed to mdadmit-webhook (see --help). Ctrl-C stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
build=${MDADMIT_BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j "$(nproc)" --target mdadmit-webhook mdadmit
certs/dev-certs.sh
cat <<'HELP'

Try, from another terminal:
  curl --cacert certs/dev/ca.crt -H 'Content-Type: application/json' \
       --data-binary @examples/review-denied.json 'https://localhost:8443/validate?timeout=10s'
  curl http://localhost:8080/metrics

HELP
exec "$build/server/mdadmit-webhook" --cert-file certs/dev/tls.crt --key-file certs/dev/tls.key \
    --listen 127.0.0.1:8443 --health-listen 127.0.0.1:8080 "$@"
