#!/bin/sh
# Installs the OpenAPI fuzzer (api/fuzz/requirements.txt) into .fuzz-venv/ when it is missing or older than
# the requirements, and prints the path of its `schemathesis` command on the last line. Needs python3 (3.9+)
# with venv and PyPI; nothing else. Used by api/src/routes/openapiFuzz.test.ts.
set -e
cd "$(dirname "$0")/.."
venv=.fuzz-venv
req=api/fuzz/requirements.txt
stamp=$venv/.installed
if [ ! -f "$stamp" ] || [ "$req" -nt "$stamp" ] || [ ! -x "$venv/bin/schemathesis" ]; then
  echo "[berth] installing the OpenAPI fuzzer into $venv (first run: about 20 s)..." >&2
  rm -rf "$venv"
  python3 -m venv "$venv" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$req" >&2
  touch "$stamp"
fi
echo "$PWD/$venv/bin/schemathesis"
