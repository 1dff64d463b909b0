#!/usr/bin/env bash
# Builds and caches a current Kubernetes API server for custom resources (the standalone
# apiextensions-apiserver, Kubernetes 1.36 at the time of writing) and a current etcd (3.5), for
# `TestEnv.start({ server: 'modern' })` (see TestEnvOptions.server in src/testing/control-plane/test-env.ts).
#
# Everything comes from Debian's development suite ("sid") on the mirror this machine already uses:
# a private apt state (APT_CONFIG) downloads the Go 1.26 toolchain, the Go sources of
# k8s.io/apiextensions-apiserver with their dependency closure (golang-*-dev) and etcd, and
# `dpkg -x` unpacks them into a work folder. Nothing is installed into the system; /etc/apt and
# the system's dpkg database are not touched.
#
# The server's `main` is our own (written below): upstream's standalone main leaves root discovery
# off (a full cluster's aggregator serves /apis) and publishes no OpenAPI; ordinary clients need both.
#
# Idempotent: binaries are cached under
#   ${OPERATOR_RUNTIME_CACHE_DIR:-$HOME/.cache/operator-runtime}/modern-apiserver/v<version>/bin
# and a later run only checks that they are there (no network). Pin a version with
# OPERATOR_RUNTIME_MODERN_VERSION=1.36.4; bring your own folder (apiextensions-apiserver, etcd)
# with OPERATOR_RUNTIME_MODERN_ASSETS.
#
# On success the last line printed is the directory holding the binaries.
set -euo pipefail

CACHE_ROOT="${OPERATOR_RUNTIME_CACHE_DIR:-$HOME/.cache/operator-runtime}"
ROOT="$CACHE_ROOT/modern-apiserver"
WORK="$ROOT/build"
PINNED="${OPERATOR_RUNTIME_MODERN_VERSION:-}"
GO_MINOR=1.26
SERVER_PKG=golang-k8s-apiextensions-apiserver-dev

log() { printf '[install-modern-apiserver %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }
complete_bin() { [ -x "$1/apiextensions-apiserver" ] && [ -x "$1/etcd" ] && [ -x "$1/etcdctl" ]; }

# 0. Binaries the user brings.
if [ -n "${OPERATOR_RUNTIME_MODERN_ASSETS:-}" ]; then
  [ -x "$OPERATOR_RUNTIME_MODERN_ASSETS/apiextensions-apiserver" ] && [ -x "$OPERATOR_RUNTIME_MODERN_ASSETS/etcd" ] \
    || die "OPERATOR_RUNTIME_MODERN_ASSETS=$OPERATOR_RUNTIME_MODERN_ASSETS must hold executable apiextensions-apiserver and etcd"
  log "using binaries from OPERATOR_RUNTIME_MODERN_ASSETS=$OPERATOR_RUNTIME_MODERN_ASSETS"
  echo "$OPERATOR_RUNTIME_MODERN_ASSETS"
  exit 0
fi

mkdir -p "$ROOT"
# Tests and a developer's shell may run this at once: one build at a time.
exec 9>"$ROOT/.install.lock"
flock 9

# 1. Cached? (the pinned version, else the newest complete build)
if [ -n "$PINNED" ]; then
  cached="$ROOT/v$PINNED/bin"
  complete_bin "$cached" || cached=""
else
  cached=""
  for d in $(find "$ROOT" -mindepth 1 -maxdepth 1 -type d -name 'v*' -printf '%f\n' | sort -V -r); do
    if complete_bin "$ROOT/$d/bin"; then cached="$ROOT/$d/bin"; break; fi
  done
fi
if [ -n "$cached" ]; then
  log "modern API server already installed in $cached"
  echo "$cached"
  exit 0
fi

command -v apt-get >/dev/null || die "apt-get not found: this installer needs a Debian machine; or set OPERATOR_RUNTIME_MODERN_ASSETS"
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

pkg_version="$(apt-cache show --no-all-versions "$SERVER_PKG" 2>/dev/null | sed -n 's/^Version: //p' | head -n1)"
[ -n "$pkg_version" ] || die "$SERVER_PKG not found in sid on $MIRROR"
# Debian packages k8s.io modules as 0.<minor>.<patch>; the Kubernetes release is 1.<minor>.<patch>.
upstream="${pkg_version%%-*}"; upstream="${upstream#*:}"; upstream="${upstream%%+*}"
VERSION="1.${upstream#0.}"
[[ "$VERSION" =~ ^1\.[0-9]+\.[0-9]+$ ]] || die "cannot derive a Kubernetes version from $SERVER_PKG $pkg_version"
if [ -n "$PINNED" ] && [ "$PINNED" != "$VERSION" ]; then
  die "OPERATOR_RUNTIME_MODERN_VERSION=$PINNED but sid has $SERVER_PKG $pkg_version (Kubernetes $VERSION)"
fi
BIN="$ROOT/v$VERSION/bin"
log "building Kubernetes $VERSION ($SERVER_PKG $pkg_version) with Go $GO_MINOR"

# 3. Download and unpack: the toolchain, the Go dependency closure, etcd.
closure=()
while IFS= read -r p; do closure+=("$p"); done < <(
  apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
    --no-replaces --no-enhances "$SERVER_PKG" 2>/dev/null | grep -E '^golang-[a-z0-9.+-]*-dev$' | sort -u)
[ "${#closure[@]}" -gt 50 ] || die "dependency closure of $SERVER_PKG looks wrong (${#closure[@]} packages)"
packages=("golang-$GO_MINOR-go" "golang-$GO_MINOR-src" etcd-server etcd-client "${closure[@]}")
DEBS="$WORK/debs"
UNPACKED="$WORK/root"
mkdir -p "$DEBS"
log "apt-get download ${#packages[@]} packages into $DEBS"
(cd "$DEBS" && apt-get download -qq "${packages[@]}" >"$WORK/apt-download.log" 2>&1) \
  || { tail -n 20 "$WORK/apt-download.log" >&2; die "apt-get download failed"; }
log "unpacking with dpkg -x into $UNPACKED"
rm -rf "$UNPACKED.tmp" && mkdir -p "$UNPACKED.tmp"
for p in "${packages[@]}"; do
  # apt-get download names files <name>_<version>_<arch>.deb; pick the newest of this name.
  deb="$(find "$DEBS" -maxdepth 1 -name "${p}_*.deb" | sort -V | tail -n1)"
  [ -n "$deb" ] || die "downloaded package for $p not found in $DEBS"
  dpkg -x "$deb" "$UNPACKED.tmp"
done
rm -rf "$UNPACKED" && mv "$UNPACKED.tmp" "$UNPACKED"

GOROOT_DIR="$UNPACKED/usr/lib/go-$GO_MINOR"
[ -x "$GOROOT_DIR/bin/go" ] || die "go $GO_MINOR not found in $GOROOT_DIR"
for b in etcd etcdctl; do [ -x "$UNPACKED/usr/bin/$b" ] || die "$b not found in the unpacked etcd packages"; done
"$UNPACKED/usr/bin/etcd" --version >/dev/null 2>&1 || die "sid's etcd does not run on this machine (libc too old?)"

# 4. Our main package, in a work GOPATH beside Debian's usr/share/gocode.
GOPATH_WORK="$WORK/gopath"
MAIN_DIR="$GOPATH_WORK/src/operator-runtime/modern-apiserver"
mkdir -p "$MAIN_DIR"
cat >"$MAIN_DIR/main.go" <<'EOF'
// The standalone apiextensions-apiserver with what ordinary clients need of a whole API server:
// root discovery (/apis lists the groups of established CRDs) and published OpenAPI. Written by
// scripts/install-modern-apiserver.sh; upstream's own main.go is the starting point.

// The k8s.io sources expect a go1.26 go.mod; GOPATH mode has none, so set the runtime defaults here.
//go:debug default=go1.26

package main

import (
	"context"
	"os"
	"sort"

	"github.com/spf13/cobra"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver"
	"k8s.io/apiextensions-apiserver/pkg/cmd/server/options"
	generatedopenapi "k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/version"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/util/openapi"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/cli"
	"k8s.io/klog/v2"
)

func main() {
	ctx := genericapiserver.SetupSignalContext()
	o := options.NewCustomResourceDefinitionsServerOptions(os.Stdout, os.Stderr)
	cmd := &cobra.Command{
		Use:   "apiextensions-apiserver",
		Short: "A Kubernetes API server for CustomResourceDefinitions and custom resources",
		PersistentPreRunE: func(*cobra.Command, []string) error {
			return o.ServerRunOptions.ComponentGlobalsRegistry.Set()
		},
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Complete(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return run(c.Context(), o)
		},
	}
	cmd.SetContext(ctx)
	o.AddFlags(cmd.Flags())
	os.Exit(cli.Run(cmd))
}

func run(ctx context.Context, o *options.CustomResourceDefinitionsServerOptions) error {
	config, err := o.Config()
	if err != nil {
		return err
	}
	// As upstream's test server does, so CRD schemas are published at /openapi/v2 and /openapi/v3.
	definitions := openapi.GetOpenAPIDefinitionsWithoutDisabledFeatures(generatedopenapi.GetOpenAPIDefinitions)
	namer := openapinamer.NewDefinitionNamer(apiserver.Scheme)
	config.GenericConfig.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(definitions, namer)
	config.GenericConfig.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(definitions, namer)

	completed := config.Complete()
	// Upstream's Complete() turns discovery off because the aggregator serves it in a full cluster.
	completed.GenericConfig.EnableDiscovery = true
	server, err := completed.New(genericapiserver.NewEmptyDelegate())
	if err != nil {
		return err
	}
	keepRootDiscoveryInSync(server)
	return server.GenericAPIServer.PrepareRun().RunWithContext(ctx)
}

// keepRootDiscoveryInSync lists every group with an established, served CRD in the plain /apis
// group list (the aggregated form is already kept by upstream's discovery controller).
func keepRootDiscoveryInSync(server *apiserver.CustomResourceDefinitions) {
	informer := server.Informers.Apiextensions().V1().CustomResourceDefinitions()
	lister := informer.Lister()
	groups := server.GenericAPIServer.DiscoveryGroupManager
	sync := func(group string) {
		crds, err := lister.List(labels.Everything())
		if err != nil {
			klog.ErrorS(err, "listing CRDs for root discovery")
			return
		}
		seen := map[string]bool{}
		var versions []metav1.GroupVersionForDiscovery
		for _, crd := range crds {
			if crd.Spec.Group != group || !established(crd) {
				continue
			}
			for _, v := range crd.Spec.Versions {
				if v.Served && !seen[v.Name] {
					seen[v.Name] = true
					versions = append(versions, metav1.GroupVersionForDiscovery{GroupVersion: group + "/" + v.Name, Version: v.Name})
				}
			}
		}
		if len(versions) == 0 {
			groups.RemoveGroup(group)
			return
		}
		sort.Slice(versions, func(i, j int) bool {
			return version.CompareKubeAwareVersionStrings(versions[i].Version, versions[j].Version) > 0
		})
		groups.AddGroup(metav1.APIGroup{Name: group, Versions: versions, PreferredVersion: versions[0]})
	}
	groupOf := func(obj interface{}) (string, bool) {
		if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tombstone.Obj
		}
		crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
		if !ok {
			return "", false
		}
		return crd.Spec.Group, true
	}
	onChange := func(obj interface{}) {
		if group, ok := groupOf(obj); ok && group != apiextensionsv1.GroupName {
			sync(group)
		}
	}
	_, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    onChange,
		UpdateFunc: func(_, obj interface{}) { onChange(obj) },
		DeleteFunc: onChange,
	})
	if err != nil {
		klog.ErrorS(err, "watching CRDs for root discovery")
	}
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}
EOF

# 5. Build (GOPATH mode, offline, static).
GOCACHE_DIR="$ROOT/go-build-cache"
minor="${VERSION#1.}"; minor="${minor%%.*}"
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=v$VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
done
log "go build apiextensions-apiserver (a few minutes cold; log: $WORK/build.log)"
build_started=$(date +%s)
mkdir -p "$BIN.tmp"
(
  cd "$MAIN_DIR"
  export GOROOT="$GOROOT_DIR" GOPATH="$GOPATH_WORK:$UNPACKED/usr/share/gocode" GO111MODULE=off \
    GOTOOLCHAIN=local GOPROXY=off GOFLAGS= CGO_ENABLED=0 GOCACHE="$GOCACHE_DIR" PATH="$GOROOT_DIR/bin:$PATH"
  go version
  go build -trimpath -ldflags "$ldflags" -o "$BIN.tmp/apiextensions-apiserver" .
) >"$WORK/build.log" 2>&1 || { tail -n 40 "$WORK/build.log" >&2; die "go build failed (full log: $WORK/build.log)"; }
log "go build took $(( $(date +%s) - build_started )) s"

cp "$UNPACKED/usr/bin/etcd" "$UNPACKED/usr/bin/etcdctl" "$BIN.tmp/"
"$BIN.tmp/apiextensions-apiserver" --help >/dev/null 2>&1 || die "the built apiextensions-apiserver does not run"
echo "v$VERSION" >"$BIN.tmp/VERSION"
rm -rf "$BIN" && mv "$BIN.tmp" "$BIN"
log "installed Kubernetes $VERSION apiextensions-apiserver and $("$BIN/etcd" --version | head -n1) into $BIN in $(( $(date +%s) - started )) s"
echo "$BIN"
