#!/bin/sh
# Installs debootstrap from Debian's packages when missing: it makes the session images' root filesystem
# (cdk8s/src/image/sessions.ts). Their run test also needs runc, which scripts/ensure-node-runtime.sh
# installs. Root only (apt-get); elsewhere it says so and those tests skip (not root).
set -u
command -v debootstrap >/dev/null 2>&1 && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "[berth] not root: cannot install debootstrap; the session image tests will skip" >&2
  exit 0
fi
echo "[berth] installing debootstrap (the session images' builder)..." >&2
apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null \
  || echo "[berth] installing debootstrap failed; the session image tests will fail" >&2
