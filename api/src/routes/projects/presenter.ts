import type { ProjectRow } from "../../db/operations/projects/types.ts";
import type { Project } from "./schemas.ts";

export function presentProject(p: ProjectRow): Project {
  return {
    id: p.id,
    organization_id: p.organization_id,
    name: p.name,
    created_at: p.created_at.toISOString(),
    updated_at: p.updated_at.toISOString(),
  };
}
