// The volumes a session mounts, as its viewer may see them.

import { KubeError } from "@berth/controllers/kube";
import { findSessionById } from "../../db/operations/sessions/findSessionById.ts";
import type { VolumeRow } from "../../db/operations/volumes/types.ts";
import type { Deps } from "../../deps.ts";
import { NotFound } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { canSeeSession } from "../sessions/visibility.ts";
import { namespacedSessionsPath, storageRuntimeOf, unreachable } from "./runtime.ts";
import { priced, readVolumeCr, type VolumeView } from "./volumeParts.ts";

/**
 * The volumes a session mounts, each with its mount, for whoever may see the session (404 otherwise,
 * existence not revealed). A volume deleted since shows from its row alone.
 */
export async function volumesOfSession(deps: Deps, principal: Principal, sessionId: string): Promise<VolumeView[]> {
  const session = await findSessionById(deps.db, sessionId);
  if (!session || !canSeeSession(principal, session)) throw new NotFound("session", sessionId);
  const res = await storageRuntimeOf(deps)
    .kube.request<{ spec?: { volumes?: { volume: string; readOnly?: boolean; mountPath?: string }[] } }>(
      "GET",
      `${namespacedSessionsPath(session.namespace)}/${encodeURIComponent(session.cr_name)}`,
    )
    .catch(unreachable("reading a session"));
  if (res.status === 404) return [];
  if (res.status >= 300) throw new KubeError("GET", namespacedSessionsPath(session.namespace), res.status, res.body);
  const views: VolumeView[] = [];
  for (const m of res.body.spec?.volumes ?? []) {
    const row = (await deps.db("volumes").where({ cr_name: m.volume, namespace: session.namespace }).first()) as
      | VolumeRow
      | undefined;
    if (!row) continue;
    views.push({
      row,
      cr: row.deleted_at ? undefined : await readVolumeCr(deps, row),
      mounts: [{ session: session.cr_name, readOnly: m.readOnly ?? false, mountPath: m.mountPath ?? null }],
    });
  }
  return priced(deps, views);
}
