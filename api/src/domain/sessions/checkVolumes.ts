// The volumes a new session asks to mount: each one the caller owns or is shared, not deleted or locked,
// its claim and pool allowing the pinned cluster; answered as the Session's volume list.
import { ANNOTATIONS, type Session, VOLUME_ID, volumeResourceName } from "@berth/crds";
import type { Deps } from "../../deps.ts";
import { Conflict, Forbidden, Invalid } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { scopeOf } from "../identity/scope.ts";
import { sessionsRuntimeOf } from "./runtime.ts";

/** A volume as a create names it: by id (vol_…) or resource name (vol-…). */
export interface VolumeAsk {
  volume: string;
  mount_path?: string;
  read_only?: boolean;
}

export async function checkVolumes(
  deps: Deps,
  principal: Principal,
  namespace: string,
  input: { volumes?: VolumeAsk[]; cluster_id?: string },
): Promise<Session["spec"]["volumes"]> {
  const out: Session["spec"]["volumes"] = [];
  const scope = scopeOf(principal);
  for (const [i, v0] of (input.volumes ?? []).entries()) {
    // A volume is named by its id (vol_…) or its resource name (vol-…); the session records the latter.
    const v = { ...v0, volume: VOLUME_ID.test(v0.volume) ? volumeResourceName(v0.volume) : v0.volume };
    const vol = await sessionsRuntimeOf(deps).catalog.volume(namespace, v.volume);
    const owned =
      vol &&
      (scope.all ||
        (vol.spec.owner.kind === "user" && vol.spec.owner.id === principal.userId) ||
        (vol.spec.owner.kind === "project" && scope.projects.has(vol.spec.owner.id)) ||
        scope.adminOrganizations.has(vol.spec.organization));
    const shares = (vol?.spec.shares ?? []).filter(
      (s) => (s.kind === "user" && s.id === principal.userId) || (s.kind === "project" && scope.projects.has(s.id)),
    );
    if (!vol || (!owned && shares.length === 0))
      throw new Invalid("the request is invalid", [
        { path: ["body", "volumes", i, "volume"], message: "no such volume", code: "invalid_reference" },
      ]);
    // Deleted and kept only for its grace period (docs/dev/storage.md): restore it to mount it.
    if (vol.metadata.annotations?.[ANNOTATIONS.volumePurgeAfter])
      throw new Invalid("the request is invalid", [
        {
          path: ["body", "volumes", i, "volume"],
          message: "this volume was deleted; restore it (POST /api/v1/storage/volumes/{id}/restore) to mount it",
          code: "invalid_reference",
        },
      ]);
    if (vol.spec.locked)
      throw new Conflict(
        `volume ${v.volume} is locked`,
        { volume: v.volume, reason: vol.spec.lockReason ?? null },
        "volume_locked",
      );
    const bound = vol.status?.boundCluster;
    if (bound && input.cluster_id && bound !== input.cluster_id) {
      // When the claim goes, as the worker records it (docs/dev/storage.md): a time once no session uses
      // it, "being released" once the release began, else its idle time after the last session ends.
      const st = vol.status ?? {};
      const idle = st.idleReleaseSeconds;
      const when = st.releasingSince
        ? "it is being released now"
        : st.releaseAfter
          ? `it is released at ${st.releaseAfter} unless a session mounts it first`
          : idle !== undefined
            ? `it is released ${Math.round(idle / 60)} minutes after its last session ends`
            : "it is released some time after its last session ends";
      throw new Conflict(
        `volume ${v.volume} has its claim on ${bound}; the session cannot run on ${input.cluster_id} (${when}). Pin it to ${bound} or leave the cluster to placement.`,
        {
          volume: v.volume,
          bound_cluster: bound,
          requested_cluster: input.cluster_id,
          releasing: st.releasingSince !== undefined,
          release_after: st.releaseAfter ?? null,
          idle_release_seconds: idle ?? null,
        },
        "volume_on_another_cluster",
      );
    }
    // A pool shared with selected clusters: its volumes mount only there.
    const pool = vol.spec.pool ? await sessionsRuntimeOf(deps).catalog.pool(vol.spec.pool) : undefined;
    if (pool?.spec.sharing === "selected" && input.cluster_id && !pool.spec.clusters?.includes(input.cluster_id))
      throw new Conflict(
        `volume ${v.volume} is on pool ${vol.spec.pool}, shared only with ${pool.spec.clusters?.join(", ")}`,
        {
          volume: v.volume,
          pool: vol.spec.pool,
          clusters: pool.spec.clusters ?? [],
          requested_cluster: input.cluster_id,
        },
        "volume_pool_not_shared",
      );
    // Reached only through read-only shares: mounted read-only, and asking to write is refused.
    const writable = owned || shares.some((s) => s.access === "ReadWrite");
    if (!writable && v.read_only === false)
      throw new Forbidden(`volume ${v.volume} is shared with you read-only`, { volume: v.volume, access: "ReadOnly" });
    out.push({
      volume: v.volume,
      readOnly: v.read_only ?? !writable,
      ...(v.mount_path ? { mountPath: v.mount_path } : {}),
    });
  }
  return out;
}
