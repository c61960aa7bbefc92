#!/usr/bin/env bash
# Builds the test bed's CSI parts into a version-keyed cache outside the clone, once, and prints the folder
# on the last line: the external-provisioner, the snapshot controller and csi-snapshotter (upstream, from Go
# modules: csibin and snapshotbin), and our hostpath driver, kubelet registrar and the program its tests'
# containers run (e2e/testbed/csibin/cmd: the upstream csi-driver-host-path and node-driver-registrar are
# not served by the Go module proxy here). The key holds the upstream versions and a digest of our sources
# and module files, so a change to them builds anew.
set -euo pipefail

PROVISIONER_VERSION=v6.4.0
# external-snapshotter's main module (snapshot-controller, csi-snapshotter); snapshotbin/go.mod pins it too.
SNAPSHOTTER_VERSION=v8.7.0
GO_MIN=1.26

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mod="$here/csibin"
snapmod="$here/snapshotbin"
cache_root="${BERTH_TESTBED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/berth/testbed}"
ours="$(cd "$mod" && find go.mod go.sum cmd -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-12)"
snapsum="$(cd "$snapmod" && sha256sum go.mod go.sum | sha256sum | cut -c1-8)"
dest="$cache_root/csi-provisioner-${PROVISIONER_VERSION}_snapshotter-${SNAPSHOTTER_VERSION}-${snapsum}_hostpath-${ours}"
bins=(csi-provisioner snapshot-controller csi-snapshotter hostpath-plugin registrar volume-probe)

log() { echo "[testbed-build-csi] $*" >&2; }

have_all() {
  local d="$1"
  for b in "${bins[@]}"; do [[ -x "$d/$b" ]] || return 1; done
}
if have_all "$dest"; then echo "$dest"; exit 0; fi

if ! command -v go >/dev/null 2>&1; then
  log "Go is not installed. Install Go >= $GO_MIN (https://go.dev/dl/ or your package manager)"
  exit 3
fi
gov="$(go env GOVERSION | sed 's/^go//')"
oldest="$(printf '%s\n%s\n' "$GO_MIN" "$gov" | sort -V)"
if [[ "${oldest%%$'\n'*}" != "$GO_MIN" ]]; then
  log "Go $gov is too old: the external-provisioner ${PROVISIONER_VERSION} and external-snapshotter ${SNAPSHOTTER_VERSION} need Go >= $GO_MIN."
  exit 3
fi

mkdir -p "$cache_root"
exec 9>"$cache_root/.build-csi.lock"
if ! flock -n 9; then
  log "another build is running; waiting for it"
  flock 9
fi
if have_all "$dest"; then echo "$dest"; exit 0; fi

# A staging folder kept across failures: a build that fails part way says which step failed and keeps
# what it finished, so the next try builds only the rest. Only a checked whole moves to $dest.
tmp="$cache_root/.partial-$(basename "$dest")"
mkdir -p "$tmp"; chmod 755 "$tmp"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
start=$(date +%s)
step=""
trap '[[ -n "$step" ]] && log "failed while $step; what was built stays in $tmp for the next try"' EXIT

# shellcheck source=version-check.sh
source "$here/version-check.sh"
checked() { [[ -x "$tmp/$1" ]] && reports "$tmp/$1" "$2"; }

if ! checked csi-provisioner "$PROVISIONER_VERSION"; then
  step="building the external-provisioner"
  log "building the external-provisioner ${PROVISIONER_VERSION} (cold: ~3 min)"
  (cd "$mod" && go build -trimpath -ldflags "-s -w -X main.version=${PROVISIONER_VERSION}" -o "$tmp/csi-provisioner" \
    github.com/kubernetes-csi/external-provisioner/v6/cmd/csi-provisioner) || exit 4
fi
for b in snapshot-controller csi-snapshotter; do
  if ! checked "$b" "$SNAPSHOTTER_VERSION"; then
    step="building the $b"
    log "building the $b ${SNAPSHOTTER_VERSION} (cold: ~15 min on 2 busy cores)"
    (cd "$snapmod" && go build -trimpath -ldflags "-s -w -X main.version=${SNAPSHOTTER_VERSION}" -o "$tmp/$b" \
      "github.com/kubernetes-csi/external-snapshotter/v8/cmd/$b") || exit 4
  fi
done
for b in hostpath-plugin registrar volume-probe; do
  if ! checked "$b" "$b $ours"; then
    step="building $b"
    log "building $b ($ours)"
    (cd "$mod" && go build -trimpath -ldflags "-s -w -X main.version=$ours" -o "$tmp/$b" "./cmd/$b") || exit 4
  fi
done

step="checking the built versions"
checked csi-provisioner "$PROVISIONER_VERSION" || { log "csi-provisioner reports: $("$tmp/csi-provisioner" --version 2>&1)"; exit 4; }
for b in snapshot-controller csi-snapshotter; do
  checked "$b" "$SNAPSHOTTER_VERSION" || { log "$b reports: $("$tmp/$b" --version 2>&1)"; exit 4; }
done
for b in hostpath-plugin registrar volume-probe; do
  checked "$b" "$b $ours" || { log "$b reports: $("$tmp/$b" --version 2>&1)"; exit 4; }
done

step=""
rm -rf "$dest"
mv "$tmp" "$dest"
trap - EXIT
log "built in $(( $(date +%s) - start ))s into $dest"
echo "$dest"
