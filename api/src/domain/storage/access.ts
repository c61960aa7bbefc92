// Who sees and who manages a volume. Seeing: its owner, the members of its owning project, the
// administrators of its organization, super_admins, and those it is shared with. Managing (resize,
// rename, delete, share): its owner or creator, the project's admins, the organization's admins,
// super_admins. Locking: administrators only. Outside what one sees, a volume does not exist (404).
import type { Volume } from "@berth/crds";
import type { VolumeRow } from "../../db/operations/volumes/types.ts";
import type { Scope } from "../identity/scope.ts";

export function sharedWith(s: Scope, v: Volume | undefined): NonNullable<Volume["spec"]["shares"]> {
  return (v?.spec.shares ?? []).filter(
    (x) => (x.kind === "user" && x.id === s.userId) || (x.kind === "project" && s.projects.has(x.id)),
  );
}

export function ownsVolume(s: Scope, row: VolumeRow): boolean {
  if (s.all || s.adminOrganizations.has(row.organization_id)) return true;
  if (!s.organizations.has(row.organization_id)) return false;
  return row.owner_kind === "user" ? row.owner_id === s.userId : s.projects.has(row.owner_id);
}

export function canSeeVolume(s: Scope, row: VolumeRow, cr?: Volume): boolean {
  return ownsVolume(s, row) || (s.organizations.has(row.organization_id) && sharedWith(s, cr).length > 0);
}

export function canManageVolume(s: Scope, row: VolumeRow): boolean {
  if (s.all || s.adminOrganizations.has(row.organization_id)) return true;
  if (!s.organizations.has(row.organization_id)) return false;
  if (row.created_by === s.userId) return true;
  return row.owner_kind === "user" ? row.owner_id === s.userId : s.adminProjects.has(row.owner_id);
}

export function canLockVolume(s: Scope, row: VolumeRow): boolean {
  return s.all || s.adminOrganizations.has(row.organization_id);
}
