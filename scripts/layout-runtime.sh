#!/usr/bin/env bash
# Lays out the Database operator's runtime files in OUT, as its image holds them: the compiled
# operator (OUT/dist/main.js), a package.json, and production dependencies only — operator-runtime
# installed from its own packed tarball (what npm would publish), never the repo's sources.
# Used by examples/database-operator/config/Dockerfile and by runtime-image.int.test.ts.
#
#   npm run build && scripts/layout-runtime.sh OUT
set -euo pipefail
out="${1:?usage: scripts/layout-runtime.sh OUT}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
example="$repo/examples/database-operator"
[ -f "$repo/dist/index.js" ] || { echo "dist/ is not built: run npm run build first" >&2; exit 1; }
# The repo-only export condition must not leak into the build or the install.
unset NODE_OPTIONS

mkdir -p "$out"
out="$(cd "$out" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$repo/node_modules/.bin/tsc" -p "$example/tsconfig.build.json" --outDir "$out/dist"

tarball="$(cd "$repo" && npm pack --ignore-scripts --silent --pack-destination "$work" | tail -n 1)"
version="$(node -p 'require(process.argv[1]).version' "$repo/package.json")"
# The example's manifest without its dev dependencies; the runtime comes from the tarball.
node -e '
const [src, dst] = process.argv.slice(1);
const m = JSON.parse(require("fs").readFileSync(src, "utf8"));
delete m.devDependencies; delete m.scripts;
delete m.dependencies["operator-runtime"];
require("fs").writeFileSync(dst, JSON.stringify(m, null, 2) + "\n");
' "$example/package.json" "$out/package.json"
(cd "$out" && npm install --omit=dev --ignore-scripts --prefer-offline --no-audit --no-fund --loglevel=error "$work/$tarball")
# Record the dependency by version, not by the temporary tarball path npm saved.
node -e '
const f = process.argv[1]; const m = JSON.parse(require("fs").readFileSync(f, "utf8"));
m.dependencies["operator-runtime"] = process.argv[2];
require("fs").writeFileSync(f, JSON.stringify(m, null, 2) + "\n");
' "$out/package.json" "$version"
rm -f "$out/package-lock.json"
# The package ships its TypeScript sources (for users' stack traces and go-to-definition), the
# Debian control-plane build script (for tests) and the lint rules' docs (docs/lint.md, what their
# URLs open); a running operator needs none of them: the maps still give src/ line numbers without the files.
rm -rf "$out/node_modules/operator-runtime/src" "$out/node_modules/operator-runtime/scripts" "$out/node_modules/operator-runtime/docs"
