// The bed's real node: a real kubelet and containerd joined to a GPU cluster (README.md, "A real node").

export type { RealNode, RealNodeTimings } from "../types.ts";
export { type CanRun, canRunRealNode } from "./can-run.ts";
export { GPU_RUNTIME_HANDLER } from "./config.ts";
export { type NodeLayout, nodeLayout } from "./layout.ts";
export { type FileImage, type ImageFile, ociArchive, pushFileImage } from "./oci.ts";
export { describeQuirks, detectQuirks, type HostQuirks } from "./quirks.ts";
export {
  PAUSE_IMAGE,
  REAL_NODE_LABELS,
  REAL_NODE_TAINT,
  type StartRealNodeOptions,
  startRealNode,
} from "./start.ts";
export { type Leftovers, leftovers, teardownRealNode } from "./teardown.ts";
