// GET /api/v1/sessions/events: server-sent events of the sessions the caller may see.
//
//   retry: 2000                          sent first: reconnect after 2 s
//   id: 1234                             the event's sequence number; reconnect with Last-Event-ID: 1234
//   event: session.updated               session.created | session.updated | session.deleted
//   data: {"id":"1234","type":"session.updated","at":"…","session_id":"ses_…","previous_phase":"Starting","session":{…}}
//
//   event: notification.created         one of the caller's own notifications (never anyone else's):
//   data: {"id":"1240","type":"notification.created","at":"…","notification":{…}}
//
//   event: heartbeat                     every 15 s (no id): {"at":"…"}; a silent connection is dead
//   event: reset                         the Last-Event-ID is older than what is kept (24 h): reload lists
//
// Works across API replicas: events live in Postgres (`session_events`) and every replica LISTENs for
// new rows (api/src/domain/sessions/eventHub.ts). Lists stay the polling fallback.
import { z } from "zod";
import type { PrivateImageRow } from "../../db/operations/images/types.ts";
import type { NotificationRow } from "../../db/operations/notifications/types.ts";
import type { SessionEventRow } from "../../db/operations/sessions/types.ts";
import type { Deps } from "../../deps.ts";
import type { Principal } from "../../domain/identity/principal.ts";
import { scopeOf } from "../../domain/identity/scope.ts";
import { IMAGE_UPDATED } from "../../domain/images/events.ts";
import { NOTIFICATION_CREATED } from "../../domain/notifications/notify.ts";
import { viewOfPayload } from "../../domain/sessions/events.ts";
import { eventsAfter, oldestKeptEvent } from "../../domain/sessions/replay.ts";
import { canSeeSessionIn } from "../../domain/sessions/visibility.ts";
import { Invalid, isDomainError } from "../../errors.ts";
import { authenticate } from "../../http/authenticate.ts";
import { defineRoute } from "../../http/route.ts";
import type { EventStreamOut } from "../../http/streams.ts";
import { presentPrivateImage } from "../images/presenter.ts";
import { presentNotification } from "../notifications/presenter.ts";
import { presentSession } from "./presenter.ts";
import { SessionIdParam } from "./schemas.ts";

export const HEARTBEAT_MS = 15_000;
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

/**
 * One text per event and process: the hub hands the same row to every stream, and presenting a session
 * (and its JSON) for each of thousands of streams was most of a replica's work (bench/src/event-streams.ts).
 */
const formatted = new WeakMap<SessionEventRow, string>();

function formatOnce(row: SessionEventRow, pullPrefix?: string): string {
  let text = formatted.get(row);
  if (text === undefined) {
    text = formatEvent(row, pullPrefix);
    formatted.set(row, text);
  }
  return text;
}

export function formatEvent(row: SessionEventRow, pullPrefix?: string): string {
  const payload = row.payload as Record<string, unknown>;
  if (row.type === IMAGE_UPDATED) {
    const image = presentPrivateImage(payload.image as PrivateImageRow, pullPrefix);
    const data = { id: String(row.seq), type: row.type, at: new Date(row.created_at).toISOString(), image };
    return `id: ${row.seq}\nevent: ${row.type}\ndata: ${JSON.stringify(data)}\n\n`;
  }
  if (row.type === NOTIFICATION_CREATED) {
    const data = {
      id: String(row.seq),
      type: row.type,
      at: new Date(row.created_at).toISOString(),
      notification: presentNotification(payload.notification as NotificationRow),
    };
    return `id: ${row.seq}\nevent: ${row.type}\ndata: ${JSON.stringify(data)}\n\n`;
  }
  const data = {
    id: String(row.seq),
    type: row.type,
    at: new Date(row.created_at).toISOString(),
    session_id: row.session_id,
    ...(payload.previous_phase !== undefined ? { previous_phase: payload.previous_phase } : {}),
    // Billing's events (session.credits_low, session.credits_exhausted) say what the wallets hold.
    ...(payload.credits !== undefined ? { credits: payload.credits } : {}),
    session: presentSession(viewOfPayload(payload)),
  };
  return `id: ${row.seq}\nevent: ${row.type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** An id this stream hands out: a Postgres bigint sequence number (larger ones fail in the query). */
function isEventId(s: string): boolean {
  return /^\d{1,19}$/.test(s) && BigInt(s) <= 9_223_372_036_854_775_807n;
}

async function stream(
  deps: Deps,
  caller: Principal,
  /** The caller as the token names them now: throws once it no longer holds (expired, revoked, disabled). */
  recheck: () => Promise<Principal>,
  out: EventStreamOut,
  lastEventId: string | undefined,
  sessionId: string | undefined,
): Promise<void> {
  // The scope is derived once per (re)check, not once per event: every stream sees every event.
  let scope = scopeOf(caller);
  // A notification goes to its user only (a super_admin sees every session, not everyone's bell).
  const visible = (row: SessionEventRow) =>
    row.session_id === null || row.organization_id === null
      ? (row.type === NOTIFICATION_CREATED || row.type === IMAGE_UPDATED) &&
        sessionId === undefined &&
        row.owner_id === scope.userId
      : (sessionId === undefined || row.session_id === sessionId) &&
        canSeeSessionIn(scope, {
          owner_id: row.owner_id,
          organization_id: row.organization_id,
          project_id: row.project_id,
        });
  // Seqs sent while replay and live delivery overlap; once live, the hub delivers each seq once, in order,
  // so only seqs up to the last replayed one need remembering.
  const sent = new Set<string>();
  let replayedUpTo = -1n;
  let replaying = true;
  const held: SessionEventRow[] = [];
  const write = (text: string) => {
    if (out.closed) return;
    out.write(text);
    // A client that does not read: drop it; it resumes with Last-Event-ID.
    if (out.buffered > MAX_BUFFERED_BYTES) out.drop();
  };
  // A resumed stream sends nothing at or before the client's last id: the hub may still deliver such an
  // event live (its own reading lags the replay's), and the client has it already.
  const floor = lastEventId === undefined ? undefined : BigInt(lastEventId);
  const send = (row: SessionEventRow) => {
    if (!visible(row)) return;
    const seq = String(row.seq);
    const n = BigInt(seq);
    if (floor !== undefined && n <= floor) return;
    if (replaying) {
      if (sent.has(seq)) return;
      sent.add(seq);
      if (n > replayedUpTo) replayedUpTo = n;
    } else if (n <= replayedUpTo) {
      if (sent.has(seq)) return;
      sent.add(seq);
    }
    write(formatOnce(row, deps.config.images?.registry?.pullPrefix));
  };

  const hub = deps.events;
  const unsubscribe = await hub.subscribe({
    deliver: (row: SessionEventRow) => (replaying ? held.push(row) : send(row)),
    close: () => out.end(),
  });
  // Each heartbeat asks again who the caller is: a stream outlives its token, a changed role or a
  // removal from an organization, and must not go on showing what the caller may no longer see.
  let checking = false;
  const heartbeat = setInterval(() => {
    if (checking) return; // the previous check is still out: no pile-up
    checking = true;
    recheck()
      .then((p) => {
        scope = scopeOf(p);
        write(`event: heartbeat\ndata: ${JSON.stringify({ at: new Date().toISOString() })}\n\n`);
      })
      .catch((e: unknown) => {
        // A refusal of the caller ends the stream with its code; a failure to check (the database) too,
        // but as unavailable: the token may well be good, and the client reconnects.
        const error = isDomainError(e)
          ? { code: e.code, message: e.message }
          : { code: "unavailable", message: "the caller could not be checked again; reconnect" };
        write(`event: error\ndata: ${JSON.stringify({ error })}\n\n`);
        out.end();
      })
      .finally(() => {
        checking = false;
      });
  }, HEARTBEAT_MS);
  try {
    if (lastEventId !== undefined) {
      const first = await oldestKeptEvent(deps);
      if (first > 0n && BigInt(lastEventId) < first - 1n) {
        write(
          `event: reset\ndata: ${JSON.stringify({ reason: "events before this point are no longer kept; reload the lists", oldest_id: first.toString() })}\n\n`,
        );
      }
      for await (const rows of eventsAfter(deps, lastEventId, () => out.closed)) for (const r of rows) send(r);
    }
    replaying = false;
    for (const r of held.splice(0)) send(r);
    write(`event: heartbeat\ndata: ${JSON.stringify({ at: new Date().toISOString() })}\n\n`);
    await out.gone;
  } finally {
    clearInterval(heartbeat);
    unsubscribe();
  }
}

export const sessionEventsRoute = defineRoute({
  method: "get",
  path: "/api/v1/sessions/events",
  operationId: "streamSessionEvents",
  tags: ["sessions"],
  summary: "Server-sent events of session changes (text/event-stream)",
  description: [
    "A `text/event-stream` of the sessions the caller may see (the same rule as the detail route). Events: `notification.created` (one of the caller's own notifications: `data` is `{id, type, at, notification}` with `notification` as `GET /api/v1/notifications` lists it), `session.created`, `session.updated` (phase, conditions, cluster, node, queue position, desired state or priority changed; `previous_phase` says where it came from), `session.deleted` (the resource was removed after retention; the history stays). `image.updated` (one of the caller's own private images changed state or progress: `data` is `{id, type, at, image}` with `image` as `GET /api/v1/images/private/{id}` answers it). `data` is JSON: `{id, type, at, session_id, previous_phase?, session}` where `session` is exactly what `GET /api/v1/sessions/{id}` answers.",
    "Every event carries `id:` (a sequence number); reconnect with the `Last-Event-ID` header (or `last_event_id`) to receive what was missed. `event: heartbeat` every 15 seconds keeps proxies from closing the connection; with each the caller is checked again, and a token that no longer holds (expired, revoked, account disabled) ends the stream with `event: error` (`data: {error: {code, message}}`): reconnect with a fresh token. `event: reset` says the id is older than what is kept (24 hours) and lists must be reloaded.",
    "Works across API replicas (events are kept in Postgres and every replica listens for them). Polling `GET /api/v1/sessions` is the fallback when a stream cannot be held.",
  ].join("\n\n"),
  auth: "user",
  query: z.object({
    last_event_id: z
      .string()
      .regex(/^\d{1,19}$/)
      .refine(isEventId, "an event id: digits, at most 9223372036854775807")
      .optional()
      .meta({ description: "Same as the Last-Event-ID header, for clients that cannot set headers." }),
    session_id: SessionIdParam.optional().meta({ description: "Only this session's events." }),
  }),
  produces: {
    "text/event-stream": z
      .looseObject({ event: z.string().optional(), data: z.string(), id: z.string().optional() })
      .meta({ description: "Each server-sent event (see the description for the kinds and their data)." }),
  },
  responses: { 200: z.string().meta({ description: "text/event-stream (see the description)." }) },
  handler: async ({ deps, principal, query, ctx }) => {
    const recheck = async () => (await authenticate(deps, ctx, "user")) as Principal;
    const header = ctx.get("Last-Event-ID");
    if (header !== "" && !isEventId(header))
      throw new Invalid("the Last-Event-ID header is not an event id", [
        {
          path: ["headers", "Last-Event-ID"],
          message: "an event id: digits, at most 9223372036854775807",
          code: "invalid_event_id",
        },
      ]);
    const lastEventId = header !== "" ? header : query.last_event_id;
    return { kind: "sse", run: (out) => stream(deps, principal, recheck, out, lastEventId, query.session_id) };
  },
});
