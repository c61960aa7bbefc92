#!/usr/bin/env sh
# The container runtime of the test bed's real node (e2e/src/testbed/real-node.ts): Debian's containerd
# and runc, installed when missing and we are root (as .ci/run installs Chromium). Exits 0 when both are
# there afterwards; otherwise says why on stderr and exits 1.
set -u
have() { command -v containerd >/dev/null 2>&1 && command -v runc >/dev/null 2>&1 && command -v ctr >/dev/null 2>&1; }
have && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "containerd/runc are not installed and installing them needs root" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "containerd/runc are not installed and this machine has no apt-get to install them" >&2
  exit 1
fi
echo "[node-runtime] installing containerd and runc from Debian" >&2
(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq containerd runc >/dev/null) \
  || { echo "apt-get install containerd runc failed" >&2; exit 1; }
have || { echo "containerd/runc still missing after apt-get install" >&2; exit 1; }
