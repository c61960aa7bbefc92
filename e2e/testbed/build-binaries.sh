#!/usr/bin/env bash
# Builds the test bed's binaries (kube-apiserver, kube-controller-manager, kube-scheduler, etcd, kwok)
# from Go modules into a version-keyed cache outside the clone, once. Prints the folder on the last line.
# KUBEBUILDER_ASSETS, when set, names a folder that already holds them (the envtest convention).
# The OCI registry (go-containerregistry's `registry`, the bed's image registries) is built into a folder
# of its own version, first, so adding it did not change the Kubernetes binaries' key;
# `build-binaries.sh --registry` builds only it and prints its folder.
set -euo pipefail

K8S_VERSION=v1.37.1
ETCD_VERSION=3.7.1
KWOK_VERSION=v0.8.0
GO_MIN=1.26
GGCR_VERSION=v0.22.1

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache_root="${BERTH_TESTBED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/berth/testbed}"
dest="$cache_root/k8s-${K8S_VERSION}_etcd-${ETCD_VERSION}_kwok-${KWOK_VERSION}"
bins=(kube-apiserver kube-controller-manager kube-scheduler etcd kwok)

log() { echo "[testbed-build] $*" >&2; }

registry_dest="$cache_root/ggcr-${GGCR_VERSION}"
ensure_registry() {
  [[ -x "$registry_dest/registry" ]] && return 0
  command -v go >/dev/null 2>&1 || { log "Go is not installed: the bed's OCI registry cannot be built"; exit 3; }
  mkdir -p "$cache_root"
  exec 8>"$cache_root/.registry.lock"; flock 8
  [[ -x "$registry_dest/registry" ]] && return 0
  local t; t="$(mktemp -d "$cache_root/.registry.XXXXXX")"; chmod 755 "$t"
  log "building the OCI registry (go-containerregistry ${GGCR_VERSION}, ~15 s)"
  (cd "$t" && GOBIN="$t" GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS= go install -trimpath -ldflags "-s -w" \
    "github.com/google/go-containerregistry/cmd/registry@${GGCR_VERSION}") || { rm -rf "$t"; exit 4; }
  rm -rf "$registry_dest"; mv "$t" "$registry_dest"
}
ensure_registry
if [[ "${1:-}" == "--registry" ]]; then echo "$registry_dest"; exit 0; fi

have_all() {
  local d="$1"
  for b in "${bins[@]}"; do [[ -x "$d/$b" ]] || return 1; done
}

if [[ -n "${KUBEBUILDER_ASSETS:-}" ]]; then
  if have_all "$KUBEBUILDER_ASSETS"; then echo "$KUBEBUILDER_ASSETS"; exit 0; fi
  log "KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS lacks one of: ${bins[*]}; building into the cache instead"
fi

if have_all "$dest"; then echo "$dest"; exit 0; fi

if ! command -v go >/dev/null 2>&1; then
  log "Go is not installed. Install Go >= $GO_MIN (https://go.dev/dl/ or your package manager),"
  log "or set KUBEBUILDER_ASSETS to a folder holding: ${bins[*]}"
  exit 3
fi
gov="$(go env GOVERSION | sed 's/^go//')"
oldest="$(printf '%s\n%s\n' "$GO_MIN" "$gov" | sort -V)"
if [[ "${oldest%%$'\n'*}" != "$GO_MIN" ]]; then
  log "Go $gov is too old: Kubernetes ${K8S_VERSION} needs Go >= $GO_MIN."
  log "Install a newer Go, or set KUBEBUILDER_ASSETS to a folder holding: ${bins[*]}"
  exit 3
fi

mkdir -p "$cache_root"
# One builder at a time per cache; a second waits and then finds the binaries.
exec 9>"$cache_root/.build.lock"
if ! flock -n 9; then
  log "another build is running; waiting for it"
  flock 9
fi
if have_all "$dest"; then echo "$dest"; exit 0; fi

# Work in a staging folder kept across failures: a build that fails part way says which step failed and
# keeps what it finished, so the next try builds only the rest. Only a checked whole moves to $dest.
tmp="$cache_root/.partial-$(basename "$dest")"
mkdir -p "$tmp"; chmod 755 "$tmp"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
start=$(date +%s)
step=""
trap '[[ -n "$step" ]] && log "failed while $step; what was built stays in $tmp for the next try"' EXIT

# Progress: a line every 30 s while the long step runs, so a cold build is not silence.
ticker() { local what="$1"; local t0=$(date +%s); while sleep 30; do log "$what ... $(( $(date +%s) - t0 ))s"; done; }

# shellcheck source=version-check.sh
source "$here/version-check.sh"
checked() { [[ -x "$tmp/$1" ]] && reports "$tmp/$1" "$2"; }

build_date="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
LD=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  LD="$LD -X $pkg.gitVersion=${K8S_VERSION} -X $pkg.gitMajor=1 -X $pkg.gitMinor=37 -X $pkg.gitTreeState=clean -X $pkg.buildDate=${build_date}"
done

k8s_ok=1
for b in kube-apiserver kube-controller-manager kube-scheduler; do checked "$b" "Kubernetes ${K8S_VERSION}" || k8s_ok=0; done
if [[ $k8s_ok == 0 ]]; then
  step="building kube-apiserver, kube-controller-manager, kube-scheduler"
  log "building kube-apiserver, kube-controller-manager, kube-scheduler ${K8S_VERSION} (cold: ~7 min, 2.5 GB RAM)"
  ticker "kubernetes build" & tick=$!
  (cd "$here/k8sbin" && go build -trimpath -pgo=off -tags selinux,notest,grpcnotrace -ldflags "-s -w $LD" -o "$tmp/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler) \
    || { kill $tick 2>/dev/null; exit 4; }
  kill $tick 2>/dev/null || true
fi

if ! checked etcd "etcd Version: ${ETCD_VERSION}"; then
  step="building etcd"
  log "building etcd ${ETCD_VERSION}"
  (cd "$here/k8sbin" && go build -trimpath -ldflags "-s -w" -o "$tmp/etcd" go.etcd.io/etcd/server/v3) || exit 4
fi

if ! checked kwok "${KWOK_VERSION#v}"; then
  step="building kwok"
  log "building kwok ${KWOK_VERSION} (~1.5 min)"
  ticker "kwok build" & tick=$!
  (cd "$tmp" && GOBIN="$tmp" GOFLAGS= go install "sigs.k8s.io/kwok/cmd/kwok@${KWOK_VERSION}") || { kill $tick 2>/dev/null; exit 4; }
  kill $tick 2>/dev/null || true
fi

# Check the stamped versions of what was built before trusting the cache.
step="checking the built versions"
for b in kube-apiserver kube-controller-manager kube-scheduler; do
  checked "$b" "Kubernetes ${K8S_VERSION}" || { log "$b reports: $("$tmp/$b" --version 2>&1)"; exit 4; }
done
checked etcd "etcd Version: ${ETCD_VERSION}" || { log "etcd reports: $("$tmp/etcd" --version 2>&1)"; exit 4; }
checked kwok "${KWOK_VERSION#v}" || { log "kwok reports: $("$tmp/kwok" --version 2>&1)"; exit 4; }

step=""
rm -rf "$dest"
mv "$tmp" "$dest"
trap - EXIT
log "built in $(( $(date +%s) - start ))s into $dest"
echo "$dest"
