# Sourced by the bed's build scripts. `reports BIN TEXT`: BIN's `--version` output contains TEXT.
# The output is read whole before it is matched: `BIN --version | grep -q TEXT` under pipefail fails
# whenever grep exits at its first match and BIN's next write meets the closed pipe (SIGPIPE), which
# happened in 2 of 10 etcd checks. e2e/src/testbed/version-check.test.ts runs it many times.
reports() {
  local out
  out="$("$1" ${VERSION_FLAG:---version} 2>&1)" || true
  [[ "$out" == *"$2"* ]]
}
