#!/bin/sh
# The builder image's entry (cdk8s/src/image/builder.ts), under the name the build Job calls
# (controllers/src/builds/manifests.ts): starts buildkitd for this one build (under RootlessKit when not
# root: the pod runs as uid 1000), waits until it answers, within BUILDKITD_START_TIMEOUT seconds, runs
# `buildctl "$@"`, stops the daemon and exits with buildctl's status. The daemon's own log goes to a file,
# shown only when something fails, so the build's log is buildctl's alone and the Job's last line stays
# its own. BERTH_INSECURE_REGISTRIES (hosts, space-separated) are reached over plain HTTP, for pulls as
# well as the push: a bed's registry (the push alone would not need it: buildctl's registry.insecure).
set -eu

timeout="${BUILDKITD_START_TIMEOUT:-60}"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/run-$(id -u)}"
mkdir -p "$XDG_RUNTIME_DIR/buildkit"
addr="unix://$XDG_RUNTIME_DIR/buildkit/buildkitd.sock"
log="$XDG_RUNTIME_DIR/buildkitd.log"
# buildkitd takes its rootless defaults (state under ~/.local/share/buildkit) only with USER set.
export USER="${USER:-$(id -un)}"
config="$XDG_RUNTIME_DIR/buildkitd.toml"
: >"$config"
for host in ${BERTH_INSECURE_REGISTRIES:-}; do
  printf '[registry."%s"]\n  http = true\n  insecure = true\n' "$host" >>"$config"
done

# BUILDKITD_FLAGS is split into words on purpose (several flags in one variable).
# shellcheck disable=SC2086
if [ "$(id -u)" = 0 ]; then
  buildkitd --addr "$addr" --config "$config" ${BUILDKITD_FLAGS:-} >"$log" 2>&1 &
else
  # Host network: the pod's own namespace already is one, and no slirp4netns is needed.
  rootlesskit --net=host --state-dir="$XDG_RUNTIME_DIR/rootlesskit" \
    buildkitd --addr "$addr" --config "$config" ${BUILDKITD_FLAGS:-} >"$log" 2>&1 &
fi
daemon=$!

daemon_log() {
  echo "--- buildkitd's log (last 40 lines) ---" >&2
  tail -n 40 "$log" >&2 || true
}
stop() {
  kill "$daemon" 2>/dev/null || return 0
  wait "$daemon" 2>/dev/null || true
}

deadline=$(($(date +%s) + timeout))
until buildctl --addr "$addr" debug workers >/dev/null 2>&1; do
  if ! kill -0 "$daemon" 2>/dev/null; then
    echo "buildkitd exited before answering" >&2
    daemon_log
    exit 1
  fi
  if [ "$(date +%s)" -ge "$deadline" ]; then
    echo "buildkitd did not answer within ${timeout} s" >&2
    daemon_log
    stop
    exit 1
  fi
  sleep 0.2
done

status=0
buildctl --addr "$addr" "$@" || status=$?
[ "$status" = 0 ] || daemon_log
stop
exit "$status"
