#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds mdadmit (release), and runs the rule engine on
# the examples of the rules contract. Extra arguments are passed to `mdadmit check`.
#   tools/run.sh                      judge examples/*.yaml
#   tools/run.sh my-deployment.yaml   judge your own manifests
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
build=${MDADMIT_BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DMDADMIT_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j "$(nproc)" --target mdadmit
if (($# == 0)); then
    set -- examples/*.yaml
fi
status=0
for manifest in "$@"; do
    "$build/cli/mdadmit" check "$manifest" || status=$?
done
exit "$status"
