export {
  findNodeBinaries,
  findTestbedBinaries,
  hasTestbedBinaries,
  NODE_BINARIES,
  TESTBED_BINARIES,
} from "./binaries.ts";
export { ComponentStartError } from "./cluster.ts";
export {
  type CsiHostpathOptions,
  findCsiBinaries,
  HOSTPATH_DRIVER,
  HOSTPATH_STORAGE_CLASS,
  type RunningCsiHostpath,
  startCsiHostpath,
  teardownCsiHostpath,
} from "./csi-hostpath.ts";
export { formatTimings, startFleet, table } from "./fleet.ts";
export {
  type BedGpuCard,
  CARD_MEMORY_MIB,
  cardUuid,
  GPU_RESOURCE,
  gpuCardsOf,
  gpuNodeManifest,
} from "./gpu.ts";
export * from "./images.ts";
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
  peakRssBytes,
  processesMentioning,
  procStat,
  rssBytes,
} from "./procfs.ts";
export * from "./real-node/index.ts";
export { findRegistryBinary, type LocalRegistry, startRegistry, startTokenGate, type TokenGate } from "./registry.ts";
export type * from "./types.ts";
