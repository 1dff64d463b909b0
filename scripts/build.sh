#!/usr/bin/env bash
# `npm run build` (also npm's prepack): compiles src/ to dist/ from tsconfig.build.json — ESM JS,
# .d.ts with declaration maps, source maps; tests, per-module test support and benchmarks left out.
# Compiles into a fresh folder and swaps it in, so a process reading dist/ never sees half a build.
# That folder sits beside dist/ (same depth below the repository), because the maps name their
# sources relative to themselves (the map of dist/testing/control-plane/binaries.js names src/testing/control-plane/binaries.ts three folders up),
# which the package ships (package.json `files`), so stack traces and go-to-definition land on it.
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(mktemp -d .dist-build.XXXXXX)"
trap 'rm -rf "$out"' EXIT
node_modules/.bin/tsc -p tsconfig.build.json --outDir "$out"
# TypeBox as one file instead of its ~370 modules (docs/footprint.md).
node --import tsx scripts/packaging/bundle-typebox.ts "$out"
mkdir -p .tmp
old="$(mktemp -d .tmp/build-old.XXXXXX)"
[ -d dist ] && mv dist "$old/dist"
mv "$out" dist
rm -rf "$old"
