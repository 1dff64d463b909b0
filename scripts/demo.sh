#!/usr/bin/env bash
# The README's demo command. Installs what it needs (npm packages, the control plane — cached after
# the first build), then runs the demo on a real local control plane.
set -euo pipefail
cd "$(dirname "$0")/.."
npm install --no-audit --no-fund --loglevel=error
export OPERATOR_RUNTIME_ASSETS="$(scripts/install-control-plane.sh | tail -n 1)"
# The repo runs its own TypeScript: 'operator-runtime' self-imports resolve to src/ through the
# package's `operator-runtime-source` export condition; NODE_OPTIONS carries it to child processes.
export NODE_OPTIONS="--conditions=operator-runtime-source ${NODE_OPTIONS:-}"
exec node --import tsx examples/database-operator/demo.ts "$@"
