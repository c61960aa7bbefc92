// /api/v1/notifications over HTTP with the real API, authenticator and database: the bell's list and
// unread count, marking and dismissal, deduplication, preferences, the live push on the session event
// stream (to its user only), BOLA and bad input; and the worker's retention of notifications.
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  anIdentityWorld,
  type IdentityTestApi,
  type IdentityWorld,
  startIdentityTestApi,
} from "../../domain/identity/identity.test-support.ts";
import { type NewNotification, notify } from "../../domain/notifications/notify.ts";
import { RetentionLoop } from "../../worker/retentionLoop.ts";

describe("/api/v1/notifications", () => {
  let t: IdentityTestApi;
  let w: IdentityWorld;

  const lowCredits = (userId: string, session = "ses_one"): NewNotification => ({
    userId,
    organizationId: w.orgA.id,
    kind: "credits.running_low",
    title: "Credits running low",
    body: "Your session has less than 10 minutes of credits left.",
    data: { session_id: session },
    dedupeKey: `credits.running_low:${session}`,
    at: t.clock.now(),
  });
  const bell = async (token: string, q = "") => (await t.request("GET", `/api/v1/notifications${q}`, { token })).body;

  /** Opens the event stream as `token`; `until` resolves with the text received once `match` shows up. */
  const openStream = async (token: string) => {
    const ac = new AbortController();
    const res = await fetch(`${t.api.url}/api/v1/sessions/events`, {
      headers: { Authorization: `Bearer ${token}` },
      signal: ac.signal,
    });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = "";
    const pump = (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          text += decoder.decode(value);
        }
      } catch {
        // aborted
      }
    })();
    return {
      async until(match: string, ms = 5000): Promise<string> {
        const end = Date.now() + ms;
        while (!text.includes(match) && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
        return text;
      },
      get text() {
        return text;
      },
      async close() {
        ac.abort();
        await pump;
      },
    };
  };

  beforeAll(async () => {
    t = await startIdentityTestApi();
    w = await anIdentityWorld(t);
  });
  afterAll(async () => {
    await t?.stop();
  });

  it("pushes a new notification on the event stream to its user only, and lists it with the unread count", async () => {
    const mine = await openStream(w.memberA.token);
    const admin = await openStream(w.adminA.token);
    const superAdmin = await openStream(w.superAdmin.token);
    try {
      await mine.until("event: heartbeat");
      await admin.until("event: heartbeat");
      await superAdmin.until("event: heartbeat");
      await notify(t.database.db, lowCredits(w.memberA.id));
      const got = await mine.until("event: notification.created");
      const line = got.split("\n").find((l) => l.startsWith("data: ") && l.includes("notification.created"));
      const data = JSON.parse((line as string).slice(6));
      expect(data.notification).toMatchObject({
        kind: "credits.running_low",
        severity: "warning",
        data: { session_id: "ses_one" },
        read_at: null,
      });
      // Nobody else's bell rings, not even the administrators'. Not a fixed wait: each gets one of its own,
      // sent after, and streams deliver in order, so the member's would have arrived first.
      await notify(t.database.db, lowCredits(w.adminA.id, "ses_admin_marker"));
      await notify(t.database.db, lowCredits(w.superAdmin.id, "ses_super_marker"));
      for (const [stream, marker] of [
        [admin, "ses_admin_marker"],
        [superAdmin, "ses_super_marker"],
      ] as const) {
        const text = await stream.until(marker);
        expect(text.split("event: notification.created").length - 1).toBe(1);
        expect(text).not.toContain("ses_one");
      }
    } finally {
      await Promise.all([mine.close(), admin.close(), superAdmin.close()]);
    }
    const list = await bell(w.memberA.token);
    expect(list.unread_count).toBe(1);
    expect(list.data).toHaveLength(1);
    for (const [token, marker] of [
      [w.adminA.token, "ses_admin_marker"],
      [w.superAdmin.token, "ses_super_marker"],
    ]) {
      const theirs = await bell(token as string);
      expect(theirs.data.map((n: { data: { session_id: string } }) => n.data.session_id)).toEqual([marker]);
      // Dismissed again, so the cases below start from empty bells.
      for (const n of theirs.data)
        await t.request("POST", `/api/v1/notifications/${n.id}/dismiss`, { token: token as string });
    }
  });

  it("writes one 'credits low' per streak: a repeat while the first is open is not written", async () => {
    expect(await notify(t.database.db, lowCredits(w.memberA.id))).toEqual([]);
    expect((await bell(w.memberA.token)).pagination.total).toBe(1);
    const [first] = (await bell(w.memberA.token)).data;
    expect((await t.request("POST", `/api/v1/notifications/${first.id}/read`, { token: w.memberA.token })).status).toBe(
      204,
    );
    // Once read, the next streak notifies again.
    expect(await notify(t.database.db, lowCredits(w.memberA.id))).toHaveLength(1);
    const list = await bell(w.memberA.token);
    expect(list.pagination.total).toBe(2);
    expect(list.unread_count).toBe(1);
  });

  it("lists newest first, filters unread, marks all read and dismisses", async () => {
    t.clock.advance(1);
    await notify(t.database.db, { ...lowCredits(w.memberA.id, "ses_two"), at: t.clock.now() });
    const list = await bell(w.memberA.token);
    expect(list.data[0].data.session_id).toBe("ses_two");
    expect((await bell(w.memberA.token, "?unread=true")).data.every((n: { read_at: null }) => n.read_at === null)).toBe(
      true,
    );
    const all = await t.request("POST", "/api/v1/notifications/read-all", { token: w.memberA.token });
    expect(all.body).toEqual({ marked: 2, unread_count: 0 });
    const d = await t.request("POST", `/api/v1/notifications/${list.data[0].id}/dismiss`, { token: w.memberA.token });
    expect(d.status).toBe(204);
    expect((await bell(w.memberA.token)).pagination.total).toBe(2);
    const again = await t.request("POST", `/api/v1/notifications/${list.data[0].id}/dismiss`, {
      token: w.memberA.token,
    });
    expect(again.status).toBe(404);
  });

  it("keeps another user's notifications invisible and untouchable (BOLA), and refuses bad input", async () => {
    const [n] = await notify(t.database.db, lowCredits(w.memberA.id, "ses_three"));
    const id = String(n?.id);
    for (const u of [w.adminA, w.superAdmin, w.memberB]) {
      for (const verb of ["read", "dismiss"]) {
        const r = await t.request("POST", `/api/v1/notifications/${id}/${verb}`, { token: u.token });
        expect(r.status).toBe(404);
        expect(r.body.error.code).toBe("not_found");
      }
    }
    expect((await bell(w.memberA.token)).unread_count).toBe(1);
    const expired = await t.request("GET", "/api/v1/notifications", { token: await t.expiredTokenFor(w.memberA.id) });
    expect(expired.body.error.code).toBe("token_expired");
    const noToken = await t.request("POST", `/api/v1/notifications/${id}/read`);
    expect(noToken.status).toBe(401);
    const badId = await t.request("POST", "/api/v1/notifications/abc/read", { token: w.memberA.token });
    expect(badId.status).toBe(400);
    expect(badId.body.error.details.issues[0].path).toEqual(["params", "notificationId"]);
    const badKind = await t.request("GET", "/api/v1/notifications?kind=weather", { token: w.memberA.token });
    expect(badKind.status).toBe(400);
    const unknown = await t.request("GET", "/api/v1/notifications?colour=red", { token: w.memberA.token });
    expect(unknown.status).toBe(400);
  });

  it("honours per-kind preferences; critical kinds cannot be turned off", async () => {
    const off = await t.request("PATCH", "/api/v1/notifications/preferences", {
      token: w.memberB.token,
      json: { preferences: [{ kind: "credits.running_low", enabled: false }] },
    });
    expect(off.status).toBe(200);
    expect(off.body.data.find((p: { kind: string }) => p.kind === "credits.running_low")).toMatchObject({
      enabled: false,
      critical: false,
    });
    expect(await notify(t.database.db, lowCredits(w.memberB.id))).toEqual([]);
    const paused = await notify(t.database.db, {
      ...lowCredits(w.memberB.id),
      kind: "session.paused",
      dedupeKey: "session.paused:ses_one",
    });
    expect(paused).toHaveLength(1);
    const critical = await t.request("PATCH", "/api/v1/notifications/preferences", {
      token: w.memberB.token,
      json: {
        preferences: [
          { kind: "image_build.finished", enabled: false },
          { kind: "session.failed", enabled: false },
        ],
      },
    });
    expect(critical.status).toBe(400);
    expect(critical.body.error.details.issues[0]).toMatchObject({
      code: "critical_kind",
      path: ["body", "preferences", 1, "enabled"],
    });
    // Nothing half-written: the non-critical one in the refused request did not change.
    const prefs = await t.request("GET", "/api/v1/notifications/preferences", { token: w.memberB.token });
    expect(prefs.body.data.find((p: { kind: string }) => p.kind === "image_build.finished").enabled).toBe(true);
    const unknownKind = await t.request("PATCH", "/api/v1/notifications/preferences", {
      token: w.memberB.token,
      json: { preferences: [{ kind: "weather", enabled: false }] },
    });
    expect(unknownKind.status).toBe(400);
    // The same kind twice (fuzzing found it answered 500): refused whole, naming the second entry.
    const twice = await t.request("PATCH", "/api/v1/notifications/preferences", {
      token: w.memberB.token,
      json: {
        preferences: [
          { kind: "image_build.finished", enabled: false },
          { kind: "image_build.finished", enabled: true },
        ],
      },
    });
    expect(twice.status).toBe(400);
    expect(twice.body.error.code).toBe("validation_failed");
    expect(twice.body.error.details.issues[0]).toMatchObject({
      code: "duplicate_kind",
      path: ["body", "preferences", 1, "kind"],
    });
    const after = await t.request("GET", "/api/v1/notifications/preferences", { token: w.memberB.token });
    expect(after.body.data.find((p: { kind: string }) => p.kind === "image_build.finished").enabled).toBe(true);
  });

  it("says which kinds apply to the caller: administrators' kinds to administrators only", async () => {
    const applying = async (token: string) => {
      const r = await t.request("GET", "/api/v1/notifications/preferences", { token });
      expect(r.status).toBe(200);
      return (r.body.data as { kind: string; applies_to_me: boolean }[])
        .filter((p) => p.applies_to_me)
        .map((p) => p.kind);
    };
    const member = await applying(w.memberA.token);
    expect(member).toContain("session.paused");
    expect(member).toContain("volume.near_quota");
    expect(member).not.toContain("quota.request_received");
    expect(member).not.toContain("webhook.endpoint_disabled");
    expect(member).not.toContain("cluster.unreachable");
    const projectAdmin = await applying(w.projectAdminA.token);
    expect(projectAdmin).toContain("quota.request_received");
    expect(projectAdmin).not.toContain("webhook.endpoint_disabled");
    const orgAdmin = await applying(w.adminA.token);
    expect(orgAdmin).toEqual(expect.arrayContaining(["quota.request_received", "webhook.endpoint_disabled"]));
    expect(orgAdmin).not.toContain("cluster.unreachable");
    expect(await applying(w.superAdmin.token)).toContain("cluster.unreachable");
    // Every kind is still listed, with its audience, for whoever wants the whole picture.
    const all = await t.request("GET", "/api/v1/notifications/preferences", { token: w.memberA.token });
    expect(all.body.data.find((p: { kind: string }) => p.kind === "cluster.unreachable")).toMatchObject({
      audience: "super_admins",
      applies_to_me: false,
    });
  });

  it("is kept 90 days: the worker's retention purges older ones (and old audit rows) in batches", async () => {
    const db = t.database.db;
    const old = new Date(t.clock.now().getTime() - 91 * 86_400_000);
    for (let i = 0; i < 5; i++) await notify(db, { ...lowCredits(w.orgMemberA.id, `ses_old${i}`), at: old });
    await notify(db, lowCredits(w.orgMemberA.id, "ses_new"));
    const loop = new RetentionLoop({ db, log: pino({ level: "silent" }), clock: t.clock, batch: 2, pauseMs: 1 });
    const purged = await loop.pass();
    expect(purged.notifications).toBe(5);
    expect(
      (await bell(w.orgMemberA.token)).data.map((n: { data: { session_id: string } }) => n.data.session_id),
    ).toEqual(["ses_new"]);
    // Audit rows are a year younger than the retention: none purged, the chain still verifies.
    expect(purged.audit).toBe(0);
    expect((await t.request("GET", "/api/v1/audit-logs/verify", { token: w.superAdmin.token })).body.valid).toBe(true);
  });
});
