#!/usr/bin/env bash
# Installs the Debian 12 packages mdadmit needs, and only those that are missing.
# Idempotent: a machine that already has everything runs no apt-get at all.
#   tools/setup.sh          build and test dependencies
#   tools/setup.sh --bench  also the benchmarks' tools (wrk, nginx, Go, gdb, valgrind)
set -euo pipefail

packages=(
    g++ cmake make pkg-config git openssl ca-certificates curl
    libboost1.81-dev libssl-dev
    nlohmann-json3-dev libvalijson-dev libspdlog-dev libyaml-dev liburing-dev
    libgtest-dev libgmock-dev libbenchmark-dev clang-format clang libclang-rt-14-dev
)
# The manifest tests render manifests/ with `kubectl kustomize`; Debian's kubectl (1.20) when
# there is no other, and the manifests use only what its older kustomize understands too.
if ! command -v kubectl >/dev/null; then
    packages+=(kubernetes-client)
fi
if [[ "${1:-}" == "--bench" ]]; then
    packages+=(wrk nginx-light procps bc golang-go gdb valgrind)
fi

missing=()
for package in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || missing+=("$package")
done

if ((${#missing[@]} == 0)); then
    echo "setup: all ${#packages[@]} packages present"
    exit 0
fi

as_root=()
if ((EUID != 0)); then
    command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    as_root=(sudo)
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -q
"${as_root[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
