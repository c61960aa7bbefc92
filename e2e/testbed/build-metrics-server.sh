#!/usr/bin/env bash
# Builds the control plane's metrics server (VictoriaMetrics single-node, docs/adr/0010-metrics-server.md)
# from its Go module into a version-keyed cache outside the clone, once (cold: ~20 s plus the module
# download). Prints the folder on the last line. BERTH_METRICS_SERVER_BIN, when set, names a folder that
# already holds `victoria-metrics`.
set -euo pipefail

VM_VERSION=v1.151.0 # newer releases need Go 1.27
GO_MIN=1.26

cache_root="${BERTH_TESTBED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/berth/testbed}"
dest="$cache_root/victoria-metrics-${VM_VERSION}"
log() { echo "[metrics-server-build] $*" >&2; }

if [[ -n "${BERTH_METRICS_SERVER_BIN:-}" && -x "${BERTH_METRICS_SERVER_BIN}/victoria-metrics" ]]; then
  echo "$BERTH_METRICS_SERVER_BIN"; exit 0
fi
if [[ -x "$dest/victoria-metrics" ]]; then echo "$dest"; exit 0; fi

if ! command -v go >/dev/null 2>&1; then
  log "Go is not installed. Install Go >= $GO_MIN, or set BERTH_METRICS_SERVER_BIN to a folder holding victoria-metrics"
  exit 3
fi

mkdir -p "$cache_root"
exec 9>"$cache_root/.metrics-build.lock"
if ! flock -n 9; then log "another build is running; waiting for it"; flock 9; fi
if [[ -x "$dest/victoria-metrics" ]]; then echo "$dest"; exit 0; fi

tmp="$(mktemp -d "$cache_root/.metrics-build.XXXXXX")"; chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
log "building victoria-metrics ${VM_VERSION}"
(cd "$tmp" && GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS= GOBIN="$tmp" \
  go install -trimpath -ldflags "-s -w -X github.com/VictoriaMetrics/VictoriaMetrics/lib/buildinfo.Version=victoria-metrics-${VM_VERSION}" \
  "github.com/VictoriaMetrics/VictoriaMetrics/app/victoria-metrics@${VM_VERSION}")
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/version-check.sh"
VERSION_FLAG=-version reports "$tmp/victoria-metrics" "${VM_VERSION}" \
  || { log "victoria-metrics reports: $("$tmp/victoria-metrics" -version 2>&1)"; exit 4; }
rm -rf "$dest"
mv "$tmp" "$dest"
trap - EXIT
log "built in $(( $(date +%s) - start ))s into $dest"
echo "$dest"
