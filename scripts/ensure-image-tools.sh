#!/bin/sh
# Installs what the session images' builder and its run tests need from Debian's packages when missing
# (cdk8s/src/image/sessions.ts): debootstrap makes the images' root filesystem, runc runs a built image in
# its test. Root only (apt-get); elsewhere it says what is missing and those tests skip with that reason.
set -u
missing=""
command -v debootstrap >/dev/null 2>&1 || missing="$missing debootstrap"
command -v runc >/dev/null 2>&1 || missing="$missing runc"
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "[berth] not root: cannot install$missing; the session image tests will skip" >&2
  exit 0
fi
echo "[berth] installing$missing (the session images' builder)..." >&2
apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null \
  || echo "[berth] installing$missing failed; the session image tests will skip" >&2
