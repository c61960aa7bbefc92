import type { MigLayoutView } from "../../domain/mig/layouts.ts";
import { formatSelector } from "../../domain/nodePools/selector.ts";
import type { MigLayout } from "./schemas.ts";

export function presentMigLayout(v: MigLayoutView): MigLayout {
  return {
    id: v.layout.id,
    cluster_id: v.layout.cluster_id,
    gpu_model: v.layout.gpu_model,
    selector: formatSelector({ key: v.layout.label_key, values: v.layout.label_values }),
    profiles: v.layout.profiles,
    nodes: v.nodes,
    created_at: new Date(v.layout.created_at).toISOString(),
  };
}
