// The inventory the operators report, as the fleet's readers see it: nodes and GPU devices are fleet
// internals (super_admin's scope; anyone else sees none: the scope, not 403), node pools are aggregates
// every signed-in user may see.
import {
  type InventoryListQuery,
  listGpuDevices,
  listNodePools,
  listNodes,
} from "../../db/operations/inventory/listInventory.ts";
import type { ClusterNodeRow, GpuDeviceRow, NodePoolRow } from "../../db/operations/inventory/types.ts";
import type { Deps } from "../../deps.ts";
import type { Principal } from "../identity/principal.ts";

type Listed<T> = Promise<{ rows: T[]; total: number }>;
const none = { rows: [], total: 0 };

export async function readNodes(deps: Pick<Deps, "db">, p: Principal, q: InventoryListQuery): Listed<ClusterNodeRow> {
  return p.isSuperAdmin ? listNodes(deps.db, q) : none;
}

export async function readGpuDevices(
  deps: Pick<Deps, "db">,
  p: Principal,
  q: InventoryListQuery & { nodeName?: string },
): Listed<GpuDeviceRow> {
  return p.isSuperAdmin ? listGpuDevices(deps.db, q) : none;
}

export function readNodePools(deps: Pick<Deps, "db">, q: InventoryListQuery): Listed<NodePoolRow> {
  return listNodePools(deps.db, q);
}
