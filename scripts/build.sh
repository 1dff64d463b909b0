#!/usr/bin/env bash
# `npm run build` (also npm's prepack): compiles src/ to dist/ from tsconfig.build.json — ESM JS,
# .d.ts with declaration maps, source maps; tests, per-module test support and benchmarks left out.
# Compiles into a fresh folder and swaps it in, so a process reading dist/ never sees half a build.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .tmp
out="$(mktemp -d .tmp/build.XXXXXX)"
trap 'rm -rf "$out"' EXIT
node_modules/.bin/tsc -p tsconfig.build.json --outDir "$out/dist"
# Data the published code reads: the conformance suite's CRD (src/testing/conformance/client-conformance.ts).
cp examples/quickstart/widget-crd.yaml "$out/dist/testing/conformance/widget-crd.yaml"
old="$(mktemp -d .tmp/build-old.XXXXXX)"
[ -d dist ] && mv dist "$old/dist"
mv "$out/dist" dist
rm -rf "$old"
