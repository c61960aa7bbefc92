// Where the bed's five binaries are. vitest's global setup and `npm start` export BERTH_TESTBED_BIN; a
// bare caller gets e2e/testbed/build-binaries.sh, which honours KUBEBUILDER_ASSETS, answers at once when
// the version-keyed cache is warm and otherwise builds (minutes, progress on stderr).
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ComponentName } from "./types.ts";

export const TESTBED_BINARIES: readonly ComponentName[] = [
  "etcd",
  "kube-apiserver",
  "kube-controller-manager",
  "kube-scheduler",
  "kwok",
];

export const BUILD_SCRIPT = fileURLToPath(new URL("../../testbed/build-binaries.sh", import.meta.url));

export function hasTestbedBinaries(dir: string): boolean {
  return TESTBED_BINARIES.every((b) => existsSync(join(dir, b)));
}

export function findTestbedBinaries(env: NodeJS.ProcessEnv = process.env): string {
  const given = env.BERTH_TESTBED_BIN;
  if (given && hasTestbedBinaries(given)) return given;
  const out = execFileSync("bash", [BUILD_SCRIPT], { stdio: ["ignore", "pipe", "inherit"], env })
    .toString()
    .trim();
  const dir = out.split("\n").at(-1) ?? "";
  if (!hasTestbedBinaries(dir))
    throw new Error(`${BUILD_SCRIPT} printed "${dir}", which lacks one of ${TESTBED_BINARIES.join(", ")}`);
  return dir;
}
