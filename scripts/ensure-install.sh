#!/bin/sh
# Installs dependencies when node_modules is missing or older than the lock file, so that `npm start`
# and `npm test` work on a fresh clone. Runs under whatever node npm found first (Node 20 on a bare
# machine); everything after it runs on the Node 24 that the `node` dev dependency puts on the path.
set -e
cd "$(dirname "$0")/.."
stamp=node_modules/.package-lock.json
if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ] || [ ! -x node_modules/.bin/node ]; then
  echo "[berth] installing dependencies (first run: about a minute)..." >&2
  if ! npm ci --no-audit --no-fund --loglevel=error >&2; then
    # A lock file out of step with a package.json must not stop a fresh clone: install, and say so.
    echo "[berth] npm ci refused the lock file; falling back to npm install (commit the updated package-lock.json)" >&2
    npm install --no-audit --no-fund --loglevel=error >&2
  fi
  echo "[berth] dependencies installed" >&2
fi
