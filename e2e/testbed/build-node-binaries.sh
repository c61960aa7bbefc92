#!/usr/bin/env bash
# Builds what the bed's real node runs besides containerd and runc (Debian's, scripts/ensure-node-runtime.sh):
# kubelet and kube-proxy at the bed's Kubernetes version from the builder module (k8sbin, same version stamps
# and tags as the control plane), the CNI plugins it wires pods with, CoreDNS for the cluster's names (corednsbin:
# a pinned CoreDNS with only the plugins the node's Corefile uses), kube-router for NetworkPolicy (its own module,
# at a pinned version; only its firewall runs), and the small programs of k8sbin/cmd (the pause
# program, the fake GPU device plugin, the tests' bed-app). Cached in a folder keyed by the versions and a
# hash of those sources, outside the clone, once. Prints the folder on the last line.
# BERTH_NODE_BIN, when set, names a folder that already holds them.
set -euo pipefail

K8S_VERSION=v1.37.1
CNI_VERSION=v1.9.1
GO_MIN=1.26
CNI_MODULE=github.com/containernetworking/plugins
COREDNS_VERSION=v1.15.0 # as corednsbin/go.mod requires; the version check below fails on a mismatch
KUBE_ROUTER_MODULE=github.com/cloudnativelabs/kube-router/v2
KUBE_ROUTER_VERSION=v2.1.0
cni=(bridge host-local loopback portmap)
cni_pkgs=(plugins/main/bridge plugins/ipam/host-local plugins/main/loopback plugins/meta/portmap)
programs=(pause fake-gpu-plugin bed-app)

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache_root="${BERTH_TESTBED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/berth/testbed}"
src_hash="$(cd "$here/k8sbin" && cat go.sum cmd/*/main.go | sha256sum | cut -c1-12)"
family="real-node_k8s-${K8S_VERSION}_cni-${CNI_VERSION}"
dns_hash="$(cd "$here/corednsbin" && cat go.sum main.go | sha256sum | cut -c1-12)"
dns_key="coredns-${COREDNS_VERSION}-${dns_hash}"
dest="$cache_root/${family}_src-${src_hash}_${dns_key}_kube-router-${KUBE_ROUTER_VERSION}"
k8s=(kubelet kube-proxy)
bins=("${k8s[@]}" "${cni[@]}" coredns kube-router "${programs[@]}")

log() { echo "[node-build] $*" >&2; }

have_all() {
  local d="$1"
  for b in "${bins[@]}"; do [[ -x "$d/$b" ]] || return 1; done
}

if [[ -n "${BERTH_NODE_BIN:-}" ]]; then
  if have_all "$BERTH_NODE_BIN"; then echo "$BERTH_NODE_BIN"; exit 0; fi
  log "BERTH_NODE_BIN=$BERTH_NODE_BIN lacks one of: ${bins[*]}; building into the cache instead"
fi
if have_all "$dest"; then echo "$dest"; exit 0; fi

if ! command -v go >/dev/null 2>&1; then
  log "Go is not installed. Install Go >= $GO_MIN, or set BERTH_NODE_BIN to a folder holding: ${bins[*]}"
  exit 3
fi

mkdir -p "$cache_root"
exec 9>"$cache_root/.node-build.lock"
if ! flock -n 9; then
  log "another build is running; waiting for it"
  flock 9
fi
if have_all "$dest"; then echo "$dest"; exit 0; fi

# A staging folder kept across failures (as build-binaries.sh's): the next try builds only the rest.
tmp="$cache_root/.partial-$(basename "$dest")"
mkdir -p "$tmp"; chmod 755 "$tmp"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
start=$(date +%s)
step=""
trap '[[ -n "$step" ]] && log "failed while $step; what was built stays in $tmp for the next try"' EXIT
ticker() { local what="$1"; local t0=$(date +%s); while sleep 30; do log "$what ... $(( $(date +%s) - t0 ))s"; done; }

# shellcheck source=version-check.sh
source "$here/version-check.sh"
checked() { [[ -x "$tmp/$1" ]] && reports "$tmp/$1" "$2"; }
# kubelet and the CNI plugins do not depend on k8sbin/cmd: take them from an older folder of this family.
reuse() {
  local b="$1" want="$2" d
  for d in "$cache_root/${family}"_src-*; do
    [[ -x "$d/$b" && "$d" != "$tmp" ]] || continue
    reports "$d/$b" "$want" && cp "$d/$b" "$tmp/$b" && return 0
  done
  return 1
}

for b in "${k8s[@]}"; do
  checked "$b" "Kubernetes ${K8S_VERSION}" || reuse "$b" "Kubernetes ${K8S_VERSION}" || {
    step="building $b"
    build_date="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    LD=""
    for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      LD="$LD -X $pkg.gitVersion=${K8S_VERSION} -X $pkg.gitMajor=1 -X $pkg.gitMinor=37 -X $pkg.gitTreeState=clean -X $pkg.buildDate=${build_date}"
    done
    log "building $b ${K8S_VERSION} (~1-2 min after the control plane's build; cold ~5 min)"
    ticker "$b build" & tick=$!
    t=$(date +%s)
    (cd "$here/k8sbin" && go build -trimpath -pgo=off -tags selinux,notest,grpcnotrace -ldflags "-s -w $LD" \
      -o "$tmp/$b" "k8s.io/kubernetes/cmd/$b") || { kill $tick 2>/dev/null; exit 4; }
    kill $tick 2>/dev/null || true
    log "$b built in $(( $(date +%s) - t ))s"
  }
done

cni_ok=1
for b in "${cni[@]}"; do checked "$b" "$CNI_VERSION" || reuse "$b" "$CNI_VERSION" || cni_ok=0; done
if [[ $cni_ok == 0 ]]; then
  step="building the CNI plugins"
  log "building CNI plugins ${CNI_VERSION}: ${cni[*]}"
  t=$(date +%s)
  pkgs=(); for p in "${cni_pkgs[@]}"; do pkgs+=("$CNI_MODULE/$p@$CNI_VERSION"); done
  (cd "$tmp" && GOBIN="$tmp" GOFLAGS= go install -trimpath \
    -ldflags "-s -w -X $CNI_MODULE/pkg/utils/buildversion.BuildVersion=$CNI_VERSION" "${pkgs[@]}") || exit 4
  log "CNI plugins built in $(( $(date +%s) - t ))s"
fi

# CoreDNS depends on corednsbin only: take it from an older folder built from the same sources.
reuse_dns() {
  local d
  for d in "$cache_root"/*_"${dns_key}" "$cache_root"/*_"${dns_key}"_*; do
    [[ -x "$d/coredns" && "$d" != "$tmp" ]] || continue
    VERSION_FLAG=-version reports "$d/coredns" "CoreDNS-${COREDNS_VERSION#v}" && cp "$d/coredns" "$tmp/coredns" && return 0
  done
  return 1
}
if ! VERSION_FLAG=-version checked coredns "CoreDNS-${COREDNS_VERSION#v}" && ! reuse_dns; then
  step="building CoreDNS"
  log "building CoreDNS ${COREDNS_VERSION} with the node's plugins (cold: a few minutes)"
  ticker "CoreDNS build" & tick=$!
  t=$(date +%s)
  (cd "$here/corednsbin" && go build -trimpath -ldflags "-s -w" -o "$tmp/coredns" .) \
    || { kill $tick 2>/dev/null; exit 4; }
  kill $tick 2>/dev/null || true
  log "CoreDNS built in $(( $(date +%s) - t ))s"
fi

kr_version="version ${KUBE_ROUTER_VERSION},"
if ! checked kube-router "$kr_version" && ! reuse kube-router "$kr_version"; then
  step="building kube-router"
  log "building kube-router ${KUBE_ROUTER_VERSION} (cold: a few minutes, its own module's dependencies)"
  t=$(date +%s)
  (cd "$tmp" && GOBIN="$tmp" GOFLAGS= go install -trimpath \
    -ldflags "-s -w -X $KUBE_ROUTER_MODULE/pkg/version.Version=$KUBE_ROUTER_VERSION" \
    "$KUBE_ROUTER_MODULE/cmd/kube-router@$KUBE_ROUTER_VERSION") || exit 4
  log "kube-router built in $(( $(date +%s) - t ))s"
fi

step="building the node's programs (${programs[*]})"
t=$(date +%s)
for p in "${programs[@]}"; do
  [[ -x "$tmp/$p" ]] && continue
  (cd "$here/k8sbin" && go build -trimpath -ldflags "-s -w" -o "$tmp/$p" "./cmd/$p") || exit 4
done
log "node programs built in $(( $(date +%s) - t ))s"

step="checking the built versions"
for b in "${k8s[@]}"; do
  checked "$b" "Kubernetes ${K8S_VERSION}" || { log "$b reports: $("$tmp/$b" --version 2>&1)"; exit 4; }
done
for b in "${cni[@]}"; do
  checked "$b" "$CNI_VERSION" || { log "$b reports: $("$tmp/$b" --version 2>&1)"; exit 4; }
done
VERSION_FLAG=-version checked coredns "CoreDNS-${COREDNS_VERSION#v}" \
  || { log "coredns reports: $("$tmp/coredns" -version 2>&1)"; exit 4; }
checked kube-router "$kr_version" || { log "kube-router reports: $("$tmp/kube-router" --version 2>&1)"; exit 4; }
VERSION_FLAG=-v reports "$tmp/pause" "berth pause" || { log "pause reports: $("$tmp/pause" -v 2>&1)"; exit 4; }

step=""
rm -rf "$dest"
mv "$tmp" "$dest"
trap - EXIT
log "built in $(( $(date +%s) - start ))s into $dest"
echo "$dest"
