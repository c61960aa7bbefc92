#!/usr/bin/env sh
# The container runtime of the test bed's real node (e2e/src/testbed/real-node.ts): Debian's containerd
# and runc, iptables for its kube-proxy and ipset for kube-router (docs/dev/real-node-network.md),
# installed when missing and we are root (as .ci/run installs Chromium). Exits 0 when all are there
# afterwards; otherwise says why on stderr and exits 1.
set -u
have() {
  for c in containerd runc ctr iptables iptables-restore ipset; do command -v "$c" >/dev/null 2>&1 || return 1; done
}
have && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "containerd/runc/iptables/ipset are not installed and installing them needs root" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "containerd/runc/iptables/ipset are not installed and this machine has no apt-get to install them" >&2
  exit 1
fi
echo "[node-runtime] installing containerd, runc, iptables and ipset from Debian" >&2
(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq containerd runc iptables ipset >/dev/null) \
  || { echo "apt-get install containerd runc iptables ipset failed" >&2; exit 1; }
have || { echo "containerd/runc/iptables/ipset still missing after apt-get install" >&2; exit 1; }
