// The writes of a reclaim notice (reclaimPass.ts): status.capacityReclaim on the Session, the
// capacity_reclaims row, the owner's notification and the Kubernetes Event, for a warning and for the pause.
import { type Session, SessionReason, sessionEventBody, sessionPath } from "@berth/crds";
import type { Knex } from "knex";
import type { Logger } from "pino";
import type { SessionRow } from "../../db/operations/sessions/types.ts";
import { viewFromResource } from "../../db/operations/sessions/view.ts";
import { fairShareSetting } from "../sessions/capacityClass.ts";
import { tellOwnerPaused, warnOwner } from "../sessions/ownerNotices.ts";
import type { SessionsRuntime } from "../sessions/runtime.ts";

/** What a notice's writes need of the pass's context (CapacityReclaimContext). */
export interface NoticeDeps {
  db: Knex;
  log: Logger;
  sessions: SessionsRuntime;
}

export type Notice = NonNullable<NonNullable<Session["status"]>["capacityReclaim"]>;

/**
 * status.capacityReclaim by a merge patch with the resourceVersion read: the new resourceVersion, or
 * undefined on a conflict (the next pass reads afresh).
 */
export async function writeNotice(rt: SessionsRuntime, s: Session, notice: Notice | null): Promise<string | undefined> {
  const res = await rt.kube.request<{ metadata?: { resourceVersion?: string } }>(
    "PATCH",
    sessionPath(s.metadata.namespace as string, s.metadata.name as string, "status"),
    { body: { metadata: { resourceVersion: s.metadata.resourceVersion }, status: { capacityReclaim: notice } } },
  );
  if (res.status === 409 || res.status === 404) return undefined;
  if (res.status >= 300) throw new Error(`writing the reclaim notice of ${s.metadata.name}: ${res.status}`);
  return res.body?.metadata?.resourceVersion ?? s.metadata.resourceVersion ?? "";
}

const clockTime = (d: Date) => `${d.toISOString().slice(11, 19)} UTC`;

export async function warn(
  c: NoticeDeps,
  s: Session,
  row: SessionRow,
  forRow: SessionRow,
  why: string,
  cards: number,
  now: Date,
  policies: Awaited<ReturnType<SessionsRuntime["catalog"]["policies"]>>,
): Promise<boolean> {
  const grace = fairShareSetting(
    policies,
    { organizationId: row.organization_id, projectId: row.project_id },
    "reclaimGraceSeconds",
  );
  const pauseAt = new Date(now.getTime() + grace * 1000);
  const needing = (await c.db("organizations").where({ id: forRow.organization_id }).first("name")) as
    | { name: string }
    | undefined;
  const reason = `A guaranteed session of ${needing?.name ?? forRow.organization_id} needs ${row.gpu_model} (${why}).`;
  const notice: Notice = { noticeAt: now.toISOString(), pauseAt: pauseAt.toISOString(), for: forRow.id, reason };
  if ((await writeNotice(c.sessions, s, notice)) === undefined) return false;
  const name = row.display_name ?? row.id;
  const minutesLeft = Math.max(0, Math.ceil(grace / 60));
  const view = JSON.parse(
    JSON.stringify(viewFromResource(row, { ...s, status: { ...s.status, capacityReclaim: notice } })),
  ) as Record<string, unknown>;
  await c.db.transaction(async (tx) => {
    await tx("capacity_reclaims").insert({
      id: `rcl_${row.id.slice(4)}${now.getTime().toString(36)}`,
      session_id: row.id,
      organization_id: row.organization_id,
      project_id: row.project_id,
      owner_id: row.owner_id,
      for_session_id: forRow.id,
      for_organization_id: forRow.organization_id,
      gpu_model: row.gpu_model,
      gpus: cards,
      reason: why,
      noticed_at: now,
      pause_at: pauseAt,
    });
    await warnOwner(
      tx,
      row,
      {
        kind: "session.reclaim_warning",
        title:
          grace === 0 ? "Borrowed session is being paused" : `Borrowed session will be paused in ${minutesLeft} min`,
        body: `Your session ${name} runs on borrowed capacity, and a guaranteed session needs its GPU. It will be paused at ${clockTime(pauseAt)}; its volumes are kept and it resumes ahead of new work when room returns. Save your work.`,
        data: { session_id: row.id, deadline: pauseAt.toISOString(), for_session_id: forRow.id, reason: why },
        dedupeKey: `reclaim_warning:${row.id}:${now.toISOString()}`,
        view,
        warning: {
          kind: "reclaim",
          reason: SessionReason.CapacityReclaimed,
          deadline: pauseAt.toISOString(),
          minutes_left: minutesLeft,
          for_session_id: forRow.id,
        },
      },
      now,
    );
  });
  await recordEvent(
    c.sessions,
    s,
    "Warning",
    SessionReason.CapacityReclaimWarning,
    `${reason} Paused at ${pauseAt.toISOString()}.`,
    now,
  ).catch((err: unknown) => c.log.debug({ err: String(err) }, "a Kubernetes Event was not recorded"));
  return true;
}

export async function markPaused(c: Pick<NoticeDeps, "db">, row: SessionRow, n: Notice, now: Date): Promise<void> {
  const name = row.display_name ?? row.id;
  await c.db.transaction(async (tx) => {
    await tx("capacity_reclaims")
      .where({ session_id: row.id })
      .whereNull("paused_at")
      .whereNull("withdrawn_at")
      .update({ paused_at: now });
    await tellOwnerPaused(
      tx,
      row,
      {
        title: "Session paused: borrowed GPU reclaimed",
        body: `Your session ${name} was paused to give its borrowed GPU back to a guaranteed session. Its volumes are kept; it resumes ahead of new work when room returns.`,
        data: { session_id: row.id, reason: "capacity_reclaimed", for_session_id: n.for },
        actorId: "system:fair-share",
        actorReason: "borrowed capacity reclaimed",
        requestId: `reclaim:capacity:${row.id}:${now.toISOString()}`,
        details: { reason: SessionReason.CapacityReclaimed, for_session_id: n.for },
      },
      now,
    );
  });
}

async function recordEvent(
  rt: SessionsRuntime,
  s: Session,
  type: "Normal" | "Warning",
  reason: string,
  message: string,
  now: Date,
) {
  const ns = s.metadata.namespace as string;
  const res = await rt.kube.request("POST", `/api/v1/namespaces/${ns}/events`, {
    body: sessionEventBody(s, { type, reason, message }, "berth-worker", now),
  });
  if (res.status >= 300) throw new Error(`recording event ${reason}: ${res.status}`);
}
