import type { NodePoolView } from "../../domain/nodePools/nodePools.ts";
import { formatSelector } from "../../domain/nodePools/selector.ts";

export function presentNodePool(v: NodePoolView) {
  const label = { key: v.pool.label_key, values: v.pool.label_values };
  return {
    id: v.pool.id,
    cluster_id: v.pool.cluster_id,
    name: v.pool.name,
    description: v.pool.description,
    selector: formatSelector(label),
    label,
    grants: v.grants.map((g) => ({
      id: g.id,
      grantee_kind: g.grantee_kind,
      grantee_id: g.grantee_id,
      grantee_name: g.grantee_name,
      grantee_organization_name: g.grantee_organization_name,
      created_at: new Date(g.created_at).toISOString(),
    })),
    nodes: v.nodes,
    created_at: new Date(v.pool.created_at).toISOString(),
    updated_at: new Date(v.pool.updated_at).toISOString(),
  };
}
