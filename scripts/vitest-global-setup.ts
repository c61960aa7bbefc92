// Runs once per `vitest run`: makes sure the test bed's binaries (and its CSI driver's) exist before any
// test file starts a cluster (a cold build is minutes), and starts one real Postgres server that test
// files share; each file makes its own database on it (api/src/db/db.test-support.ts).
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startPostgres } from "@berth/api/db/server";

export default async function setup(): Promise<() => Promise<void>> {
  if (!process.env.BERTH_TESTBED_BIN) {
    const script = fileURLToPath(new URL("../e2e/testbed/build-binaries.sh", import.meta.url));
    const out = execFileSync("bash", [script], { stdio: ["ignore", "pipe", "inherit"] })
      .toString()
      .trim();
    process.env.BERTH_TESTBED_BIN = out.split("\n").at(-1);
  }
  // The bed's CSI driver (e2e/src/testbed/csi-hostpath.ts): its cold build is minutes too.
  if (!process.env.BERTH_TESTBED_CSI_BIN) {
    const script = fileURLToPath(new URL("../e2e/testbed/build-csi.sh", import.meta.url));
    const out = execFileSync("bash", [script], { stdio: ["ignore", "pipe", "inherit"] })
      .toString()
      .trim();
    process.env.BERTH_TESTBED_CSI_BIN = out.split("\n").at(-1);
  }
  if (process.env.DATABASE_URL) return async () => {};
  const dir = mkdtempSync(join(tmpdir(), "berth-pg-"));
  const server = await startPostgres({ dataDir: join(dir, "data") });
  process.env.BERTH_TEST_PG_URL = server.url;
  return async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  };
}
