#!/usr/bin/env bash
# Unit tests only, for contributors without root, Debian or a control-plane build (macOS too):
# npm install when node_modules is missing or older than the lockfile, typecheck, lint, then every
# `*.test.ts` in the tree that is not an `*.int.test.ts` and not a chaos scenario. It installs no
# system package and starts no API server. `scripts/test.sh` stays the full run.
#
#   scripts/test-unit.sh                  every unit test
#   scripts/test-unit.sh path/a.test.ts   only these files (still checks first)
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step "npm packages"
if [ ! -f node_modules/.package-lock.json ] || [ package.json -nt node_modules/.package-lock.json ] || { [ -f package-lock.json ] && [ package-lock.json -nt node_modules/.package-lock.json ]; }; then
  npm install --no-audit --no-fund --loglevel=error
else
  echo "node_modules up to date"
fi

step "typecheck"
npm run --silent typecheck

step "lint"
npm run --silent lint

if [ "$#" -gt 0 ]; then
  files=("$@")
else
  # find, not globstar: macOS ships bash 3.2, which has no globstar.
  files=()
  while IFS= read -r f; do files+=("$f"); done < <(
    find . \( -name node_modules -o -name .git -o -name dist -o -name .tmp -o -path ./chaos \) -prune -o \
      -type f -name '*.test.ts' ! -name '*.int.test.ts' -print | sed 's|^\./||' | sort
  )
fi
[ "${#files[@]}" -gt 0 ] || { echo "no test files found" >&2; exit 1; }

step "unit tests (${#files[@]} files)"
mkdir -p .tmp
tap=.tmp/test-unit-results.tap
status=0
# The source condition: examples import 'operator-runtime' from src/ without a build.
node --conditions=operator-runtime-source --import tsx --test --test-concurrency="${TEST_CONCURRENCY:-2}" \
  --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=tap --test-reporter-destination="$tap" \
  "${files[@]}" || status=$?

total="$(sed -n 's/^# tests \([0-9]*\)$/\1/p' "$tap" | tail -n 1)"
skipped="$(sed -n 's/^# skipped \([0-9]*\)$/\1/p' "$tap" | tail -n 1)"
echo "unit tests run: ${total:-0}, skipped: ${skipped:-0}, exit status: $status"
if [ "${total:-0}" -eq 0 ]; then echo "error: zero tests ran" >&2; exit 1; fi
exit "$status"
