#!/usr/bin/env bash
# `npm run chaos`: the chaos scenarios in chaos/ against the local control plane with a 3-member
# etcd cluster. Needs root (iptables owner-match rules, the orchaos-etcd<i> system users).
# Prints the results table and writes .tmp/chaos-results.json.
#
#   scripts/chaos.sh                      every chaos/**/*.test.ts
#   scripts/chaos.sh chaos/operator-leader-kill.test.ts   only those files
#   CHAOS_LONG=1 scripts/chaos.sh         the long parameters (15 s faults, more objects)
set -euo pipefail
cd "$(dirname "$0")/.."
shopt -s globstar nullglob

[ "$(id -u)" -eq 0 ] || { echo "chaos tests need root (iptables, system users)" >&2; exit 1; }
command -v iptables >/dev/null || { echo "iptables not found (apt-get install -y iptables)" >&2; exit 1; }
if [ -z "${OPERATOR_RUNTIME_ASSETS:-}" ]; then
  OPERATOR_RUNTIME_ASSETS="$(scripts/install-control-plane.sh | tail -n 1)"
  export OPERATOR_RUNTIME_ASSETS
fi

if [ "$#" -gt 0 ]; then files=("$@"); else files=(chaos/**/*.test.ts); fi
[ "${#files[@]}" -gt 0 ] || { echo "no chaos scenarios found" >&2; exit 1; }

# 'operator-runtime' self-imports resolve to src/ (the package's `operator-runtime-source` export
# condition); NODE_OPTIONS carries it to the replicas the bed spawns.
export NODE_OPTIONS="--conditions=operator-runtime-source ${NODE_OPTIONS:-}"

mkdir -p .tmp
rm -rf .tmp/chaos-results.d
status=0
# One scenario at a time: parallel control planes would distort the measured times.
node --import tsx --test --test-concurrency=1 --test-reporter=spec "${files[@]}" || status=$?
node --import tsx chaos/support/print-results.ts || status=$((status == 0 ? 1 : status))
exit "$status"
