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

export const NODE_BUILD_SCRIPT = fileURLToPath(new URL("../../testbed/build-node-binaries.sh", import.meta.url));

/** What the real node runs from the build (containerd, runc, iptables and ipset are the system's). */
export const NODE_BINARIES = [
  "kubelet",
  "kube-proxy",
  "bridge",
  "host-local",
  "loopback",
  "portmap",
  "coredns",
  "kube-router",
  "pause",
  "fake-gpu-plugin",
  "bed-app",
];

/** The real node's binaries: BERTH_NODE_BIN, else e2e/testbed/build-node-binaries.sh (cached; cold: minutes). */
export function findNodeBinaries(env: NodeJS.ProcessEnv = process.env): string {
  const has = (d: string) => NODE_BINARIES.every((b) => existsSync(join(d, b)));
  if (env.BERTH_NODE_BIN && has(env.BERTH_NODE_BIN)) return env.BERTH_NODE_BIN;
  const out = execFileSync("bash", [NODE_BUILD_SCRIPT], { stdio: ["ignore", "pipe", "inherit"], env })
    .toString()
    .trim();
  const dir = out.split("\n").at(-1) ?? "";
  if (!has(dir))
    throw new Error(`${NODE_BUILD_SCRIPT} printed "${dir}", which lacks one of ${NODE_BINARIES.join(", ")}`);
  return dir;
}
