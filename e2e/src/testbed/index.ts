export { findTestbedBinaries, hasTestbedBinaries, TESTBED_BINARIES } from "./binaries.ts";
export { ComponentStartError } from "./cluster.ts";
export { formatTimings, startFleet, table } from "./fleet.ts";
export { GPU_RESOURCE, gpuNodeManifest } from "./gpu.ts";
export { KubeHttp, KubeHttpError } from "./kube.ts";
export { kubeConfigFrom } from "./kubeconfig.ts";
export { criLogLines } from "./kwok.ts";
export { quietPorts } from "./ports.ts";
export { type ChildLogs, childLogs } from "./process.ts";
export {
  allPids,
  childrenOf,
  cpuSeconds,
  cpuSecondsWithChildren,
  isAlive,
  listeningPorts,
  listeningPortsOf,
  type ProcStat,
  processesMentioning,
  procStat,
  rssBytes,
} from "./procfs.ts";
export type * from "./types.ts";
