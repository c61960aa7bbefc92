// The bed build's version checks must not fail by timing. A binary that writes more after its version
// line is the case that broke `--version | grep -q` under pipefail (grep leaves at its first match, the
// next write gets SIGPIPE): the check the build uses passes every time, and the old shape is shown to
// fail on the same binary so this test can tell the two apart.
import { execFile } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const checkScript = fileURLToPath(new URL("../../testbed/version-check.sh", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "berth-version-check-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Prints its version line first, then 256 KiB more: more than a pipe holds, so a reader that leaves early
// always cuts it off.
const chatty = join(dir, "chatty");
writeFileSync(
  chatty,
  `#!/usr/bin/env bash\necho "etcd Version: 3.7.1"\nhead -c 262144 /dev/zero | tr '\\0' 'x'\necho\n`,
);
chmodSync(chatty, 0o755);

async function exitCode(script: string): Promise<number> {
  return run("bash", ["-euo", "pipefail", "-c", script], { timeout: 20_000 }).then(
    () => 0,
    (e: { code?: number }) => e.code ?? -1,
  );
}

describe("the bed build's version checks", () => {
  it("pass 100 times in a row on a binary that keeps writing after its version line", async () => {
    const loop = `source '${checkScript}'; for i in $(seq 100); do reports '${chatty}' 'etcd Version: 3.7.1' || exit 7; done`;
    expect(await exitCode(loop)).toBe(0);
  }, 60_000);

  it("refuse a binary whose version is another", async () => {
    expect(await exitCode(`source '${checkScript}'; reports '${chatty}' 'etcd Version: 3.6.0'`)).not.toBe(0);
  });

  it("replace a shape that fails on the same binary (`--version | grep -q` under pipefail)", async () => {
    expect(await exitCode(`'${chatty}' --version | grep -q 'etcd Version: 3.7.1'`)).not.toBe(0);
  });
});
