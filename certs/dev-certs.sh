#!/usr/bin/env bash
# Development certificates for running the webhook on localhost: a CA and an ECDSA P-256
# serving certificate for localhost, 127.0.0.1 and ::1.
#   certs/dev-certs.sh [DIR]     (default certs/dev; existing files are kept)
# DIR/ca.crt is the CA to trust (curl --cacert), DIR/tls.crt and DIR/tls.key serve.
set -euo pipefail
dir=${1:-"$(dirname "$0")/dev"}
mkdir -p "$dir"
cd "$dir"
if [[ -s tls.crt && -s tls.key && -s ca.crt ]] && openssl x509 -checkend 86400 -noout -in tls.crt >/dev/null; then
    echo "dev-certs: keeping the certificates in $dir"
    exit 0
fi
umask 077
openssl ecparam -name prime256v1 -genkey -noout -out ca.key
openssl req -x509 -new -key ca.key -sha256 -days 3650 -subj "/CN=mdadmit development CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" -out ca.crt
openssl ecparam -name prime256v1 -genkey -noout -out tls.key
openssl req -new -key tls.key -subj "/CN=localhost" -out tls.csr
cat > tls.ext <<'EXT'
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1
EXT
openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -sha256 -days 90 \
    -extfile tls.ext -out tls.crt 2>/dev/null
rm -f tls.csr tls.ext ca.srl
chmod 644 ca.crt tls.crt
echo "dev-certs: wrote $dir/ca.crt, $dir/tls.crt and $dir/tls.key"
