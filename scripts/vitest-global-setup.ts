// Runs once per `vitest run`: makes sure the test bed's binaries exist before any test file starts a
// cluster, so a cold build (minutes) is not charged to one test's hook timeout.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

export default function setup(): void {
  if (process.env.BERTH_TESTBED_BIN) return;
  const script = fileURLToPath(new URL("../e2e/testbed/build-binaries.sh", import.meta.url));
  const out = execFileSync("bash", [script], { stdio: ["ignore", "pipe", "inherit"] }).toString().trim();
  process.env.BERTH_TESTBED_BIN = out.split("\n").at(-1);
}
