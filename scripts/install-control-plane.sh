#!/usr/bin/env bash
# Installs the local Kubernetes control plane used by TestEnv and the demo:
# etcd from Debian, kube-apiserver and kube-controller-manager built from Debian's
# `kubernetes` source package (v1.20.x) with Debian's Go.
#
# Idempotent: the built binaries are cached under
#   ${OPERATOR_RUNTIME_CACHE_DIR:-$HOME/.cache/operator-runtime}/control-plane/<version>/bin
# and a second run only checks that they are there.
#
# Users who already have binaries can skip the build:
#   KUBEBUILDER_ASSETS=<dir with etcd and kube-apiserver [and kube-controller-manager]>
#   or OPERATOR_RUNTIME_ETCD / OPERATOR_RUNTIME_KUBE_APISERVER / OPERATOR_RUNTIME_KUBE_CONTROLLER_MANAGER
#
# On success the last line printed is the directory holding the binaries.
set -euo pipefail

KUBERNETES_VERSION="${OPERATOR_RUNTIME_KUBERNETES_VERSION:-1.20.2}"
CACHE_ROOT="${OPERATOR_RUNTIME_CACHE_DIR:-$HOME/.cache/operator-runtime}"
TARGET="$CACHE_ROOT/control-plane/v$KUBERNETES_VERSION"
BIN="$TARGET/bin"

log() { printf '[install-control-plane %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

have_all() { # dir
  [ -x "$1/etcd" ] && [ -x "$1/kube-apiserver" ] && [ -x "$1/kube-controller-manager" ]
}

# 0. Binaries the user brings.
if [ -n "${OPERATOR_RUNTIME_ETCD:-}" ] && [ -n "${OPERATOR_RUNTIME_KUBE_APISERVER:-}" ]; then
  [ -x "$OPERATOR_RUNTIME_ETCD" ] || die "OPERATOR_RUNTIME_ETCD=$OPERATOR_RUNTIME_ETCD is not executable"
  [ -x "$OPERATOR_RUNTIME_KUBE_APISERVER" ] || die "OPERATOR_RUNTIME_KUBE_APISERVER=$OPERATOR_RUNTIME_KUBE_APISERVER is not executable"
  log "using binaries from OPERATOR_RUNTIME_ETCD / OPERATOR_RUNTIME_KUBE_APISERVER"
  dirname "$OPERATOR_RUNTIME_KUBE_APISERVER"
  exit 0
fi
if [ -n "${KUBEBUILDER_ASSETS:-}" ]; then
  [ -x "$KUBEBUILDER_ASSETS/etcd" ] && [ -x "$KUBEBUILDER_ASSETS/kube-apiserver" ] \
    || die "KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS must hold executable etcd and kube-apiserver"
  log "using binaries from KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS"
  echo "$KUBEBUILDER_ASSETS"
  exit 0
fi

mkdir -p "$CACHE_ROOT"
# Two concurrent runs (tests and demo) must not build twice into one tree.
exec 9>"$CACHE_ROOT/.install.lock"
flock 9

if have_all "$BIN"; then
  log "control plane v$KUBERNETES_VERSION already installed in $BIN"
  echo "$BIN"
  exit 0
fi

[ "$(id -u)" = 0 ] || die "building the control plane needs root (apt-get); or set KUBEBUILDER_ASSETS"
command -v apt-get >/dev/null || die "apt-get not found: this installer needs Debian 12; or set KUBEBUILDER_ASSETS"

export DEBIAN_FRONTEND=noninteractive
PACKAGES=(etcd-server etcd-client golang-go golang-github-modern-go-reflect2-dev jq rsync dpkg-dev make iptables util-linux openssl)

# 1. deb-src for the same mirror and suites the machine already uses.
SOURCES=/etc/apt/sources.list.d/debian.sources
SRC_LIST=/etc/apt/sources.list.d/operator-runtime-src.sources
need_update=0
if [ ! -f "$SRC_LIST" ]; then
  [ -f "$SOURCES" ] || die "$SOURCES not found: cannot derive a deb-src entry"
  log "adding deb-src entries derived from $SOURCES"
  # Copy each stanza that has 'Types: deb', turning it into 'Types: deb-src'.
  awk 'BEGIN{RS=""; ORS="\n\n"} /(^|\n)Types:[^\n]*deb([ \t]|\n|$)/ && !/deb-src/ {
         gsub(/Types:[^\n]*/, "Types: deb-src"); print }' "$SOURCES" > "$SRC_LIST.tmp"
  grep -q 'deb-src' "$SRC_LIST.tmp" || { rm -f "$SRC_LIST.tmp"; die "no deb stanza found in $SOURCES"; }
  mv "$SRC_LIST.tmp" "$SRC_LIST"
  need_update=1
fi

missing=()
for p in "${PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ "$need_update" = 1 ] || [ "${#missing[@]}" -gt 0 ]; then
  log "apt-get update"
  apt-get update -qq
fi
if [ "${#missing[@]}" -gt 0 ]; then
  log "apt-get install ${missing[*]}"
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# 2. Source.
WORK="$CACHE_ROOT/build"
mkdir -p "$WORK"
SRC_DIR="$(find "$WORK" -maxdepth 1 -type d -name "kubernetes-$KUBERNETES_VERSION*" | head -n1)"
if [ -z "$SRC_DIR" ]; then
  log "apt-get source kubernetes"
  (cd "$WORK" && apt-get source -qq kubernetes >/dev/null 2>"$WORK/apt-source.log") \
    || { tail -n 20 "$WORK/apt-source.log" >&2; die "apt-get source kubernetes failed"; }
  SRC_DIR="$(find "$WORK" -maxdepth 1 -type d -name 'kubernetes-*' | head -n1)"
fi
[ -n "$SRC_DIR" ] || die "kubernetes source not found under $WORK"
found_version="$(sed -n 's/^ *gitVersion *= *"v\{0,1\}\([0-9.]*\).*/\1/p' "$SRC_DIR/debian/rules" 2>/dev/null | head -n1)"
if [ -z "$found_version" ] && [ -f "$SRC_DIR/CHANGELOG/CHANGELOG-1.20.md" ]; then found_version="1.20"; fi
log "kubernetes source in $SRC_DIR (version ${found_version:-unknown}, expected $KUBERNETES_VERSION)"

# 3. reflect2 1.0.1 (vendored) crashes Go 1.19 builds in mapiterinit; use Debian's 1.0.2.
REFLECT2_DEB=/usr/share/gocode/src/github.com/modern-go/reflect2
REFLECT2_VENDOR="$SRC_DIR/vendor/github.com/modern-go/reflect2"
if [ ! -f "$REFLECT2_VENDOR/.operator-runtime-swapped" ]; then
  log "replacing vendored reflect2 with Debian's copy from $REFLECT2_DEB"
  [ -d "$REFLECT2_DEB" ] || die "$REFLECT2_DEB missing (package golang-github-modern-go-reflect2-dev)"
  rsync -a --delete "$REFLECT2_DEB/" "$REFLECT2_VENDOR/"
  rm -f "$REFLECT2_VENDOR/go.mod" "$REFLECT2_VENDOR/go.sum"
  touch "$REFLECT2_VENDOR/.operator-runtime-swapped"
fi

# 4. Build as debian/rules does: GOPATH with a symlink, make WHAT=..., no cgo.
mkdir -p "$SRC_DIR/.go/src/k8s.io"
ln -sfn "$SRC_DIR" "$SRC_DIR/.go/src/k8s.io/kubernetes"
log "building kube-apiserver and kube-controller-manager (10-15 min the first time; log: $WORK/build.log)"
start=$(date +%s)
(
  cd "$SRC_DIR/.go/src/k8s.io/kubernetes"
  export GOPATH="$SRC_DIR/.go" GO111MODULE=off CGO_ENABLED=0 GOFLAGS=-mod=vendor GOCACHE="$CACHE_ROOT/go-build-cache"
  export KUBE_GIT_VERSION="v$KUBERNETES_VERSION" KUBE_GIT_TREE_STATE=clean
  make WHAT="cmd/kube-apiserver cmd/kube-controller-manager"
) >"$WORK/build.log" 2>&1 || { tail -n 40 "$WORK/build.log" >&2; die "build failed (full log: $WORK/build.log)"; }
log "build took $(( $(date +%s) - start )) s"

mkdir -p "$BIN.tmp"
for b in kube-apiserver kube-controller-manager; do
  f="$(find "$SRC_DIR/_output" -type f -name "$b" -perm -u+x | head -n1)"
  [ -n "$f" ] || die "$b not found under $SRC_DIR/_output"
  cp "$f" "$BIN.tmp/$b"
done
ln -sfn "$(command -v etcd)" "$BIN.tmp/etcd"
ln -sfn "$(command -v etcdctl)" "$BIN.tmp/etcdctl"
rm -rf "$BIN" && mv "$BIN.tmp" "$BIN"
"$BIN/kube-apiserver" --version >&2 || true
log "installed into $BIN"
echo "$BIN"
