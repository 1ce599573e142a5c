#!/usr/bin/env bash
# certs/gen-certs.sh: the chain verifies, the SANs are the Service's names, a rerun rotates
# the serving certificate, a CA rotation keeps the old CA trusted, and the webhook serves
# the certificate to a client that checks the Service's name.
#   test/deploy/certs_test.sh PATH-TO-mdadmit-webhook
set -euo pipefail
webhook=$1
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'kill "${pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
name=mdadmit.mdadmit-system.svc

certs/gen-certs.sh --dir "$work" >/dev/null
openssl verify -CAfile "$work/ca-bundle.crt" "$work/tls.crt" >/dev/null || fail "chain does not verify"
sans=$(openssl x509 -noout -ext subjectAltName -in "$work/tls.crt")
[[ "$sans" == *"DNS:$name,"* && "$sans" == *"DNS:$name.cluster.local"* ]] || fail "SANs: $sans"
[[ "$(openssl x509 -noout -text -in "$work/tls.crt")" == *"prime256v1"* ]] || fail "not ECDSA P-256"
openssl x509 -checkend $((89 * 86400)) -noout -in "$work/tls.crt" >/dev/null || fail "serving cert under 89 days"
! openssl x509 -checkend $((91 * 86400)) -noout -in "$work/tls.crt" >/dev/null || fail "serving cert over 90 days"
grep -q "kind: Secret" "$work/secret.yaml" || fail "no Secret written"
grep -q "/webhooks/1/clientConfig/caBundle" "$work/webhook-patches.sh" || fail "no caBundle patch for both webhooks"

first_serial=$(openssl x509 -noout -serial -in "$work/tls.crt")
first_ca=$(openssl x509 -noout -fingerprint -in "$work/ca.crt")
certs/gen-certs.sh --dir "$work" >/dev/null
[[ "$(openssl x509 -noout -serial -in "$work/tls.crt")" != "$first_serial" ]] || fail "rerun did not rotate"
[[ "$(openssl x509 -noout -fingerprint -in "$work/ca.crt")" == "$first_ca" ]] || fail "rerun changed the CA"
cp "$work/tls.crt" "$work/old-serving.crt"

certs/gen-certs.sh --dir "$work" --rotate-ca >/dev/null
[[ "$(openssl x509 -noout -fingerprint -in "$work/ca.crt")" != "$first_ca" ]] || fail "--rotate-ca kept the CA"
[[ "$(grep -c 'BEGIN CERT' "$work/ca-bundle.crt")" == 2 ]] || fail "bundle does not keep the old CA"
openssl verify -CAfile "$work/ca-bundle.crt" "$work/old-serving.crt" >/dev/null || fail "old CA no longer trusted"
openssl verify -CAfile "$work/ca-bundle.crt" "$work/tls.crt" >/dev/null || fail "new chain does not verify"

"$webhook" --cert-file "$work/tls.crt" --key-file "$work/tls.key" --listen 127.0.0.1:0 --health-listen off \
    2>"$work/webhook.log" &
pid=$!
port=""
for _ in $(seq 100); do
    port=$(sed -n 's/.*tls_port=\([0-9]*\).*/\1/p' "$work/webhook.log")
    [[ -n "$port" ]] && break
    sleep 0.05
done
[[ -n "$port" ]] || fail "webhook did not start: $(cat "$work/webhook.log")"
openssl s_client -connect "127.0.0.1:$port" -servername "$name" -verify_hostname "$name" \
    -CAfile "$work/ca-bundle.crt" -verify_return_error </dev/null >"$work/handshake.log" 2>&1 ||
    fail "TLS handshake for $name: $(tail -5 "$work/handshake.log")"
grep -q "Verify return code: 0 (ok)" "$work/handshake.log" || fail "verification: $(grep Verify "$work/handshake.log")"
echo "certs_test: every check passed"
