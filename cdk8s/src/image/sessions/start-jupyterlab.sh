#!/bin/sh
# JupyterLab as a Berth session runs it (cdk8s/src/image/sessions.ts): on BERTH_PORT, under BERTH_BASE_PATH
# (/proxy/{cr}/, forwarded unchanged by the gateway), with no token or password (the gateway authenticates),
# any Origin (the gateway checks it on WebSockets) and the server's root at the home folder.
set -eu
base="${BERTH_BASE_PATH:-${NB_PREFIX:-}/}"
exec jupyter lab \
  --no-browser \
  --ServerApp.ip=0.0.0.0 \
  --ServerApp.port="${BERTH_PORT:-8888}" \
  --ServerApp.port_retries=0 \
  --ServerApp.base_url="$base" \
  --ServerApp.root_dir="$HOME" \
  --IdentityProvider.token= \
  --ServerApp.password= \
  --ServerApp.allow_origin='*' \
  --ServerApp.allow_remote_access=True \
  --ServerApp.trust_xheaders=True \
  "$@"
