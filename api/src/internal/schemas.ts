// The internal plane's bodies live in @berth/crds/internal-plane, shared with the operator that sends them.
export {
  ActivityReport,
  GpuDevice,
  InventoryNode,
  InventoryReport,
  MAX_SAMPLE_MS,
  StatusReport,
  StorageReport,
  UsageBatch,
} from "@berth/crds/internal-plane";
