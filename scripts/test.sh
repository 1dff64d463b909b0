#!/usr/bin/env bash
# The README's test command. On a fresh Debian 12 machine it installs everything it needs
# (npm packages, Debian packages, the control-plane binaries — cached after the first build),
# then typechecks, lints and runs every unit and integration test. Fails if no test ran.
#
#   scripts/test.sh                 everything in the default run
#   scripts/test.sh path/a.test.ts  only the given files (still installs/checks first)
set -euo pipefail
cd "$(dirname "$0")/.."
shopt -s globstar nullglob

step() { printf '\n== %s\n' "$*"; }

step "npm packages"
npm install --no-audit --no-fund --loglevel=error

step "control plane"
assets="$(scripts/install-control-plane.sh | tail -n 1)"
export OPERATOR_RUNTIME_ASSETS="$assets"
echo "binaries in $OPERATOR_RUNTIME_ASSETS"

step "modern API server (Kubernetes 1.36, CRD-only; cached after the first build)"
mkdir -p .tmp
if modern="$(scripts/install-modern-apiserver.sh 2>.tmp/install-modern-apiserver.log | tail -n 1)" && [ -n "$modern" ]; then
  export OPERATOR_RUNTIME_MODERN_ASSETS="$modern"
  echo "binaries in $OPERATOR_RUNTIME_MODERN_ASSETS"
else
  # Not fatal here: the tests that need the server fail, and their message carries this reason.
  export OPERATOR_RUNTIME_MODERN_UNAVAILABLE="$(tail -n 1 .tmp/install-modern-apiserver.log) (full log: .tmp/install-modern-apiserver.log)"
  echo "warning: the modern API server could not be installed: $OPERATOR_RUNTIME_MODERN_UNAVAILABLE" >&2
fi

step "test tools (chromium, prometheus)"
scripts/install-test-tools.sh

step "cosign and kustomize (Debian sid's binaries; cached after the first download)"
supply_chain_tools="$(scripts/install-cosign-kustomize.sh | tail -n 1)"
export OPERATOR_RUNTIME_SUPPLY_CHAIN_TOOLS="$supply_chain_tools"
echo "binaries in $OPERATOR_RUNTIME_SUPPLY_CHAIN_TOOLS"

step "typecheck"
npm run --silent typecheck

step "lint"
npm run --silent lint

step "build"
# dist/ is what the pack-and-consume and runtime-image tests ship; built once here, before they run.
npm run --silent build

step "node 24"
node24="$(scripts/install-node24.sh | tail -n 1)"

# The tests run from source: 'operator-runtime' self-imports resolve to src/ through the package's
# `operator-runtime-source` export condition; NODE_OPTIONS carries it to spawned child processes.
export NODE_OPTIONS="--conditions=operator-runtime-source ${NODE_OPTIONS:-}"

if [ "$#" -gt 0 ]; then
  files=("$@")
else
  # Expanded by the shell: Node 20 runs nothing for a quoted glob or a bare folder.
  # Plus one chaos scenario as a smoke test (npm run chaos runs them all).
  files=(src/**/*.test.ts examples/**/*.test.ts scripts/**/*.test.ts monitoring/**/*.test.ts bench/report/**/*.test.ts chaos/operator-leader-kill.test.ts)
fi
[ "${#files[@]}" -gt 0 ] || { echo "no test files found" >&2; exit 1; }

step "tests (${#files[@]} files)"
mkdir -p .tmp
tap=.tmp/test-results.tap
status=0
node --import tsx --test --test-concurrency="${TEST_CONCURRENCY:-2}" \
  --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=tap --test-reporter-destination="$tap" \
  "${files[@]}" || status=$?

# Node 24 LTS as well (default run only): unit tests, the pack-and-consume test and the reference
# operator's integration tests. `engines` says >=20.20.2, so both majors must stay green.
tap24=.tmp/test-results-node24.tap
rm -f "$tap24"
if [ "$#" -eq 0 ]; then
  files24=()
  for f in src/**/*.test.ts examples/**/*.test.ts scripts/packaging/*.test.ts; do
    case "$f" in
      *.int.test.ts) ;;
      # Checks of text, types, lint rules and generated files: what they check does not depend on
      # the Node major, and each file costs a process start (~1 s of a core) per run.
      src/eslint/* | src/codegen/*) ;;
      *) files24+=("$f") ;;
    esac
  done
  files24+=(scripts/pack.int.test.ts examples/database-operator/database-operator.int.test.ts examples/database-operator/runtime-image.int.test.ts)
  step "tests on node $("$node24" --version) (${#files24[@]} files)"
  OPERATOR_RUNTIME_SECOND_NODE=1 "$node24" --import tsx --test --test-concurrency="${TEST_CONCURRENCY:-2}" \
    --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=tap --test-reporter-destination="$tap24" \
    "${files24[@]}" || status=$((status == 0 ? 1 : status))
fi

count() { sed -n "s/^# $1 \\([0-9]*\\)\$/\\1/p" "$tap" $([ -f "$tap24" ] && echo "$tap24") | awk '{ n += $1 } END { print n + 0 }'; }
total="$(count tests)"
skipped="$(count skipped)"
echo "tests run: ${total:-0}, skipped: ${skipped:-0}, exit status: $status"
if [ "${total:-0}" -eq 0 ]; then echo "error: zero tests ran" >&2; exit 1; fi
exit "$status"
