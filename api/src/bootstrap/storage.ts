// `npm start`'s storage: a default pool that every GPU cluster of the local fleet mounts through one
// storage class, and the demo researcher's home volume on it, so the journey shows files kept across
// pause and resume. Both through the storage domain, as an administrator and the researcher would make
// them; idempotent (an existing pool or volume of the name is left as it is).
import type { Deps } from "../deps.ts";
import { loadPrincipal } from "../domain/identity/loadPrincipal.ts";
import type { Principal } from "../domain/identity/principal.ts";
import { createVolume } from "../domain/storage/createVolume.ts";
import { createPool, readPool } from "../domain/storage/pools.ts";

/** The installer acting as a super_admin (never a person: nothing signs in as it). */
const INSTALLER: Principal = {
  userId: "system:npm-start",
  email: "npm-start@berth.local",
  isSuperAdmin: true,
  mustChangePassword: false,
  memberships: [],
};

export async function ensureDefaultPool(
  deps: Deps,
  o: { name: string; cluster: string; storageClass: string; displayName?: string },
): Promise<{ created: boolean }> {
  return ensurePool(deps, { ...o, sharing: "all", default: true });
}

/** A pool of that name, made as given when there is none (an existing one is left as it is). */
export async function ensurePool(
  deps: Deps,
  o: {
    name: string;
    cluster: string;
    storageClass: string;
    displayName?: string;
    sharing: "all" | "selected";
    clusters?: string[];
    default: boolean;
  },
): Promise<{ created: boolean }> {
  if (await readPool(deps, o.name)) return { created: false };
  await createPool(deps, INSTALLER, {
    name: o.name,
    cluster: o.cluster,
    storage_class: o.storageClass,
    sharing: o.sharing,
    default: o.default,
    ...(o.clusters ? { clusters: o.clusters } : {}),
    ...(o.displayName ? { display_name: o.displayName } : {}),
  });
  return { created: true };
}

export const HOME_VOLUME_MARKER = "local-demo-home";

/**
 * The demo researcher's `home` volume (owned by them), once per database (a bootstrap marker): one the
 * researcher deleted is not made again at the next start.
 */
export async function ensureHomeVolume(
  deps: Deps,
  o: { email: string; name?: string; sizeGb?: number },
): Promise<{ created: boolean; volumeId?: string }> {
  if (await deps.db("bootstrap_markers").where({ name: HOME_VOLUME_MARKER }).first()) return { created: false };
  const user = (await deps.db("users").where({ email: o.email }).first("id")) as { id: string } | undefined;
  if (!user) return { created: false };
  const name = o.name ?? "home";
  const had = (await deps
    .db("volumes")
    .where({ owner_kind: "user", owner_id: user.id, name })
    .whereNull("deleted_at")
    .first("id")) as { id: string } | undefined;
  if (had) return { created: false, volumeId: had.id };
  const record = await loadPrincipal(deps.db, user.id);
  if (!record) return { created: false };
  const v = await createVolume(deps, record.principal, { name, size_gb: o.sizeGb ?? 20 });
  await deps
    .db("bootstrap_markers")
    .insert({ name: HOME_VOLUME_MARKER, details: { volume: v.row.id } })
    .onConflict("name")
    .ignore();
  return { created: true, volumeId: v.row.id };
}
