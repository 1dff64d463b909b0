#!/usr/bin/env bash
# Installs cosign (signing and verifying SBOMs and packed artifacts, docs/supply-chain.md) and
# kustomize (rendering the GitOps overlays of examples/database-operator/overlays) for the tests.
#
# Both come as binary packages from Debian's development suite ("sid") on the mirror this machine
# already uses, through a private apt state (APT_CONFIG), as scripts/install-modern-apiserver.sh
# gets its Go sources: `apt-get download` + `dpkg -x` into a work folder. Nothing is installed into
# the system; /etc/apt and the system's dpkg database are not touched. Both are static Go binaries
# that need only libc6 (>= 2.34), which Debian 12 has.
#
# Idempotent: the binaries are cached under
#   ${OPERATOR_RUNTIME_CACHE_DIR:-$HOME/.cache/operator-runtime}/supply-chain-tools/bin
# and a later run only checks that they are there and run (no network). Bring your own folder
# holding `cosign` and `kustomize` with OPERATOR_RUNTIME_SUPPLY_CHAIN_TOOLS.
#
# On success the last line printed is the directory holding the binaries.
set -euo pipefail

CACHE_ROOT="${OPERATOR_RUNTIME_CACHE_DIR:-$HOME/.cache/operator-runtime}"
ROOT="$CACHE_ROOT/supply-chain-tools"
BIN="$ROOT/bin"
WORK="$ROOT/build"
PACKAGES=(cosign kustomize)

log() { printf '[install-cosign-kustomize %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }
complete_bin() { [ -x "$1/cosign" ] && [ -x "$1/kustomize" ]; }

# 0. Binaries the user brings.
if [ -n "${OPERATOR_RUNTIME_SUPPLY_CHAIN_TOOLS:-}" ]; then
  complete_bin "$OPERATOR_RUNTIME_SUPPLY_CHAIN_TOOLS" \
    || die "OPERATOR_RUNTIME_SUPPLY_CHAIN_TOOLS=$OPERATOR_RUNTIME_SUPPLY_CHAIN_TOOLS must hold executable cosign and kustomize"
  log "using binaries from OPERATOR_RUNTIME_SUPPLY_CHAIN_TOOLS=$OPERATOR_RUNTIME_SUPPLY_CHAIN_TOOLS"
  echo "$OPERATOR_RUNTIME_SUPPLY_CHAIN_TOOLS"
  exit 0
fi

mkdir -p "$ROOT"
# Tests and a developer's shell may run this at once: one install at a time.
exec 9>"$ROOT/.install.lock"
flock 9

# 1. Cached?
if complete_bin "$BIN"; then
  log "already installed in $BIN ($(cat "$BIN/VERSIONS" 2>/dev/null | tr '\n' ' '))"
  echo "$BIN"
  exit 0
fi

command -v apt-get >/dev/null || die "apt-get not found: this installer needs a Debian machine; or set OPERATOR_RUNTIME_SUPPLY_CHAIN_TOOLS"
command -v dpkg >/dev/null || die "dpkg not found"
started=$(date +%s)

# 2. A private apt state for sid on the machine's own mirror.
SOURCES=/etc/apt/sources.list.d/debian.sources
[ -f "$SOURCES" ] || die "$SOURCES not found: cannot tell which Debian mirror this machine uses"
# The first stanza that is not the security archive names the main mirror.
MIRROR="$(awk 'BEGIN{RS=""} !/debian-security/ { if (match($0, /URIs:[ \t]*[^ \t\n]+/)) { s = substr($0, RSTART, RLENGTH); sub(/URIs:[ \t]*/, "", s); print s; exit } }' "$SOURCES")"
[ -n "$MIRROR" ] || die "no URIs line found in $SOURCES"
KEYRING="$(awk '/^Signed-By:/{print $2; exit}' "$SOURCES")"
KEYRING="${KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}"
APT="$WORK/apt"
mkdir -p "$APT/state/lists/partial" "$APT/cache/archives/partial" "$APT/sources.list.d" "$APT/preferences.d"
[ -f "$APT/status" ] || : >"$APT/status"
echo "deb [signed-by=$KEYRING] $MIRROR sid main" >"$APT/sources.list"
cat >"$APT/apt.conf" <<EOF
Dir::State "$APT/state";
Dir::State::status "$APT/status";
Dir::Cache "$APT/cache";
Dir::Etc::SourceList "$APT/sources.list";
Dir::Etc::SourceParts "$APT/sources.list.d";
Dir::Etc::Preferences "$APT/preferences";
Dir::Etc::PreferencesParts "$APT/preferences.d";
// The machine's mirror may be a frozen snapshot whose Release has expired.
Acquire::Check-Valid-Until "false";
Acquire::Languages "none";
APT::Sandbox::User "root";
EOF
export APT_CONFIG="$APT/apt.conf"
log "apt-get update (sid on $MIRROR, private state in $APT)"
apt-get update -qq >"$WORK/apt-update.log" 2>&1 || { tail -n 20 "$WORK/apt-update.log" >&2; die "apt-get update for sid failed"; }

# 3. Download and unpack (each is one static binary; their only Depends is libc6).
DEBS="$WORK/debs"
UNPACKED="$WORK/root"
mkdir -p "$DEBS"
log "apt-get download ${PACKAGES[*]} into $DEBS"
(cd "$DEBS" && apt-get download -qq "${PACKAGES[@]}" >"$WORK/apt-download.log" 2>&1) \
  || { tail -n 20 "$WORK/apt-download.log" >&2; die "apt-get download ${PACKAGES[*]} failed (not in sid on $MIRROR?)"; }
rm -rf "$UNPACKED" "$BIN.tmp" && mkdir -p "$UNPACKED" "$BIN.tmp"
: >"$BIN.tmp/VERSIONS"
for p in "${PACKAGES[@]}"; do
  # apt-get download names files <name>_<version>_<arch>.deb; pick the newest of this name.
  deb="$(find "$DEBS" -maxdepth 1 -name "${p}_*.deb" | sort -V | tail -n1)"
  [ -n "$deb" ] || die "downloaded package for $p not found in $DEBS"
  dpkg -x "$deb" "$UNPACKED"
  [ -x "$UNPACKED/usr/bin/$p" ] || die "$p not found in $deb"
  cp "$UNPACKED/usr/bin/$p" "$BIN.tmp/$p"
  echo "$p $(dpkg-deb -f "$deb" Version)" >>"$BIN.tmp/VERSIONS"
done

"$BIN.tmp/cosign" version >/dev/null 2>&1 || die "sid's cosign does not run on this machine (libc too old?)"
"$BIN.tmp/kustomize" version >/dev/null 2>&1 || die "sid's kustomize does not run on this machine (libc too old?)"
rm -rf "$BIN" && mv "$BIN.tmp" "$BIN"
rm -rf "$UNPACKED"
log "installed $(tr '\n' ' ' <"$BIN/VERSIONS")into $BIN in $(( $(date +%s) - started )) s"
echo "$BIN"
