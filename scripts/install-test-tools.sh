#!/usr/bin/env bash
# Installs the Debian packages the tests drive besides the control plane:
#   chromium    headless browser for the operator console test (driven by playwright-core)
#   prometheus  promtool (rule checks and rule unit tests) and the live scrape-and-alert test
#   lua5.1      runs the generated Argo CD health checks (Argo CD's gopher-lua is Lua 5.1)
# Idempotent: installs only what is missing. apt may be locked by a concurrent install; waits for it.
set -euo pipefail

PACKAGES=(chromium prometheus lua5.1)

log() { printf '[install-test-tools %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then
  log "already installed: ${PACKAGES[*]}"
  exit 0
fi

SUDO=()
[ "$(id -u)" -eq 0 ] || SUDO=(sudo)
log "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Lock::Timeout waits for another apt/dpkg (e.g. the control-plane install) instead of failing.
"${SUDO[@]}" apt-get -o DPkg::Lock::Timeout=600 update -qq
"${SUDO[@]}" apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${missing[@]}"
