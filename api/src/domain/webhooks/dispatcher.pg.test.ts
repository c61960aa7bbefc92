// The dispatcher end to end: real Postgres (the outbox filled by the triggers in the event's own
// transaction), a real HTTPS receiver on loopback admitted by the allowlist, signatures checked by the
// independent `standardwebhooks` package, and a dispatcher in a child process killed with SIGKILL.
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import pino from "pino";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../db/db.test-support.ts";
import { connect } from "../../db/knex.ts";
import { insertSessionEvents } from "../../db/operations/sessions/sessionEvents.ts";
import { insertEndpoint } from "../../db/operations/webhooks/insertEndpoint.ts";
import type { WebhookEndpointRow } from "../../db/operations/webhooks/types.ts";
import { relayTo } from "../../db/relay.test-support.ts";
import { type DispatcherOptions, WebhookDispatcher } from "./dispatcher.ts";
import { newEndpointId } from "./endpoints.ts";
import { type Receiver, startReceiver } from "./receiver.test-support.ts";
import { SecretUnreadable, WebhookSecretBox } from "./secretBox.ts";
import { newWebhookSecret } from "./signing.ts";
import { WebhookGuard } from "./ssrf.ts";

const log = pino({ level: "silent" });
let n = 0;

describe("the webhook dispatcher", () => {
  let database: TestDatabase;
  const stops: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterEach(async () => {
    while (stops.length > 0) await stops.pop()?.();
  });
  afterAll(async () => {
    await database.drop();
  });

  const db = () => database.db;

  async function anEndpoint(url: string, o: { org?: string; types?: string[] } = {}): Promise<WebhookEndpointRow> {
    return insertEndpoint(db(), {
      id: newEndpointId(),
      organizationId: o.org ?? `org_${++n}`,
      url,
      description: "",
      eventTypes: o.types ?? [],
      secret: newWebhookSecret(),
      createdBy: "usr_test",
      at: new Date(),
    });
  }

  async function aReceiver(): Promise<Receiver> {
    const r = await startReceiver();
    stops.push(() => r.stop());
    return r;
  }

  function aDispatcher(r: Receiver, o: Partial<DispatcherOptions> = {}): WebhookDispatcher {
    const d = new WebhookDispatcher({
      db: db(),
      log,
      guard: new WebhookGuard({ allowHosts: ["127.0.0.1"] }),
      ca: r.ca,
      retryScheduleMs: [0, 150, 150, 150, 150],
      pollMs: 100,
      timeoutMs: 2_000,
      ...o,
    });
    d.start();
    stops.push(() => d.stop());
    return d;
  }

  /** One phase change of a session, written as the worker writes it (one transaction per event). */
  async function phase(org: string, session: string, previous: string | undefined, next: string, reason?: string) {
    await insertSessionEvents(db(), [
      {
        session_id: session,
        owner_id: "usr_owner",
        organization_id: org,
        project_id: null,
        type: previous === undefined ? "session.created" : "session.updated",
        payload: {
          view: { id: session, phase: next, reason: reason ?? null, gpuModel: "A100", gpuCount: 1, offering: "a100" },
          ...(previous !== undefined ? { previous_phase: previous } : {}),
        },
      },
    ]);
  }

  const LIFECYCLE: [string | undefined, string, string?][] = [
    [undefined, "Pending"],
    ["Pending", "Queued"],
    ["Queued", "Starting"],
    ["Starting", "Running"],
    ["Running", "Running"], // a condition changed, not the phase: no webhook
    ["Running", "Pausing"],
    ["Pausing", "Paused", "InsufficientCredits"],
    ["Paused", "Resuming"],
    ["Resuming", "Running"],
    ["Running", "Terminating"],
    ["Terminating", "Terminated"],
  ];
  const KINDS = [
    "session.created",
    "session.queued",
    "session.running",
    "session.paused",
    "session.resumed",
    "session.running",
    "session.terminated",
  ];

  it("delivers every event of a session's lifecycle in order, once per webhook-id, signed (checked by standardwebhooks)", async () => {
    const r = await aReceiver();
    const e = await anEndpoint(r.url);
    const other = await anEndpoint(r.url); // another organization: hears nothing of this one
    aDispatcher(r, { perEndpoint: 4 });
    for (const s of ["ses_a", "ses_b"])
      for (const [prev, next, reason] of LIFECYCLE) await phase(e.organization_id, s, prev, next, reason);
    await r.until((rs) => rs.length >= KINDS.length * 2);
    // Nothing more can come: every delivery made (in the events' own transactions) is settled, none
    // pending, each sent once; the other organization's endpoint got none.
    const deliveries = (id: string) => db()("webhook_deliveries").where({ endpoint_id: id });
    await until(async () => (await deliveries(e.id).where({ state: "pending" })).length === 0);
    expect((await deliveries(e.id)).map((d) => [d.state, d.attempts])).toEqual(
      Array.from({ length: KINDS.length * 2 }, () => ["succeeded", 1]),
    );
    expect(await deliveries(other.id)).toEqual([]);

    expect(r.received).toHaveLength(KINDS.length * 2);
    const ids = r.received.map((x) => x.id);
    expect(new Set(ids).size).toBe(ids.length);
    const verifier = new Webhook(e.secret);
    const bodies = r.received.map(
      (x) => verifier.verify(x.body, x.headers) as { type: string; timestamp: string; data: Record<string, unknown> },
    );
    for (const s of ["ses_a", "ses_b"]) {
      expect(bodies.filter((b) => b.data.session_id === s).map((b) => b.type)).toEqual(KINDS);
    }
    const paused = bodies.find((b) => b.type === "session.paused");
    expect(paused?.data).toMatchObject({ reason: "InsufficientCredits", previous_phase: "Pausing", phase: "Paused" });
    expect(Date.parse(paused?.timestamp ?? "")).not.toBeNaN();
    expect(() => new Webhook(other.secret).verify(r.received[0]?.body ?? "", r.received[0]?.headers ?? {})).toThrow();
    // The receiver sees a request before the dispatcher settles it: wait for the last one.
    await until(async () =>
      (await db()("webhook_deliveries").where({ endpoint_id: e.id }).pluck("state")).every((s) => s === "succeeded"),
    );
    expect(await db()("webhook_deliveries").where({ endpoint_id: other.id }).count({ c: "*" })).toEqual([{ c: "0" }]);
  });

  it("retries after a 500 and after a timeout, with the same webhook-id, and logs every attempt", async () => {
    const r = await aReceiver();
    r.answer = (_x, i) => (i === 1 ? { status: 500, body: "boom".repeat(2000) } : i === 2 ? "hang" : { status: 200 });
    const e = await anEndpoint(r.url);
    aDispatcher(r, { timeoutMs: 400 });
    await phase(e.organization_id, "ses_r", undefined, "Pending");
    await r.until((rs) => rs.length >= 3);
    expect(new Set(r.received.map((x) => x.id)).size).toBe(1);
    await until(
      async () => (await db()("webhook_deliveries").where({ endpoint_id: e.id }).first())?.state === "succeeded",
    );
    const log = await db()("webhook_attempts").where({ endpoint_id: e.id }).orderBy("attempt");
    expect(log.map((a) => [a.attempt, a.outcome, a.status_code])).toEqual([
      [1, "failed", 500],
      [2, "failed", null],
      [3, "succeeded", 200],
    ]);
    expect(log[0].response_body).toHaveLength(4096);
    expect(log[1].error).toContain("no answer within 400 ms");
  });

  it("does not follow a redirect: it is a failed attempt", async () => {
    const r = await aReceiver();
    r.answer = () => ({ status: 302, headers: { location: "https://169.254.169.254/latest/meta-data" } });
    const e = await anEndpoint(r.url);
    aDispatcher(r, { retryScheduleMs: [0, 60_000] });
    await phase(e.organization_id, "ses_redirect", undefined, "Pending");
    await until(async () => (await db()("webhook_attempts").where({ endpoint_id: e.id }).first()) !== undefined);
    const a = await db()("webhook_attempts").where({ endpoint_id: e.id }).first();
    expect([a.outcome, a.status_code, a.error]).toEqual(["failed", 302, "redirect (302) not followed"]);
    expect(r.received).toHaveLength(1);
  });

  it("honours Retry-After when it asks for longer than the schedule", async () => {
    const r = await aReceiver();
    r.answer = (_x, i) => (i === 1 ? { status: 429, headers: { "retry-after": "1" } } : { status: 204 });
    const e = await anEndpoint(r.url);
    aDispatcher(r, { retryScheduleMs: [0, 10, 10_000] });
    await phase(e.organization_id, "ses_ra", undefined, "Pending");
    await r.until((rs) => rs.length >= 2, 5_000);
    expect((r.received[1]?.at ?? 0) - (r.received[0]?.at ?? 0)).toBeGreaterThanOrEqual(900);
  });

  it("disables the endpoint when the receiver answers 410, tells the organization's admins, and stops enqueueing for it", async () => {
    const r = await aReceiver();
    r.answer = () => ({ status: 410 });
    await db()("organizations").insert({ id: "org_gone", name: "Gone", slug: "gone" });
    await db()("users").insert({ id: "usr_gone_admin", email: "admin@gone.test", password_hash: "x" });
    await db()("memberships").insert({ user_id: "usr_gone_admin", organization_id: "org_gone", role: "org_admin" });
    const e = await anEndpoint(r.url, { org: "org_gone" });
    aDispatcher(r);
    await phase(e.organization_id, "ses_g", undefined, "Pending");
    await until(async () => (await db()("webhook_endpoints").where({ id: e.id }).first())?.enabled === false);
    const row = await db()("webhook_endpoints").where({ id: e.id }).first();
    expect(row.disabled_reason).toBe("gone");
    await phase(e.organization_id, "ses_g", "Pending", "Queued");
    // The change is committed, and no webhook event or delivery was made with it (they are made in its
    // own transaction, for enabled endpoints only), nor is any left pending: nothing more can be sent.
    expect(await db()("session_events").where({ session_id: "ses_g" })).toHaveLength(2);
    expect(await db()("webhook_events").where({ organization_id: "org_gone" })).toHaveLength(1);
    expect(await db()("webhook_deliveries").where({ endpoint_id: e.id }).pluck("state")).toEqual(["failed"]);
    expect(r.received).toHaveLength(1);
    const told = await db()("notifications").where({ organization_id: "org_gone" });
    expect(told.map((x) => [x.user_id, x.kind, x.data.reason])).toEqual([
      ["usr_gone_admin", "webhook.endpoint_disabled", "gone"],
    ]);
  });

  it("disables an endpoint that has failed for longer than the limit", async () => {
    const r = await aReceiver();
    r.answer = () => ({ status: 503 });
    const e = await anEndpoint(r.url);
    await db()("webhook_endpoints")
      .where({ id: e.id })
      .update({ failing_since: new Date(Date.now() - 5 * 86_400_000 - 1000) });
    aDispatcher(r);
    await phase(e.organization_id, "ses_f", undefined, "Pending");
    await until(async () => (await db()("webhook_endpoints").where({ id: e.id }).first())?.enabled === false);
    expect((await db()("webhook_endpoints").where({ id: e.id }).first()).disabled_reason).toBe("failing");
  });

  it("connects to the address it checked, and refuses a name that now resolves to a private address", async () => {
    const r = await aReceiver();
    const port = new URL(r.url).port;
    let answer = "127.0.0.1";
    const e = await anEndpoint(`https://hooks.example.test:${port}/hooks`);
    aDispatcher(r, {
      guard: new WebhookGuard({ allowHosts: ["127.0.0.1"], resolve: async () => [answer] }),
      retryScheduleMs: [0, 60_000],
    });
    await phase(e.organization_id, "ses_dns", undefined, "Pending");
    await r.until((rs) => rs.length >= 1);
    expect(r.received[0]?.headers.host).toBe(`hooks.example.test:${port}`);
    answer = "10.0.0.1";
    await phase(e.organization_id, "ses_dns", "Pending", "Queued");
    await until(
      async () => (await db()("webhook_attempts").where({ endpoint_id: e.id }).count({ c: "*" }))[0]?.c === "2",
    );
    const last = await db()("webhook_attempts")
      .where({ endpoint_id: e.id })
      .orderBy("attempt", "desc")
      .orderBy("id", "desc")
      .first();
    expect(last.outcome).toBe("failed");
    expect(last.error).toContain("webhook_target_forbidden");
    expect(r.received).toHaveLength(1);
  });

  it("settles an attempt once the database answers again within the claim, instead of sending it twice", async () => {
    const r = await aReceiver();
    const e = await anEndpoint(r.url);
    // The dispatcher reaches Postgres through a relay that goes silent (a partition) while the receiver
    // answers: its settle fails on the query timeout, and the database is back a second later.
    const relay = await relayTo(database.url);
    const viaRelay = connect(relay.url, { queryTimeoutMs: 500, connectTimeoutMs: 500 });
    stops.push(async () => {
      relay.heal();
      await viaRelay.destroy();
      await relay.cut();
    });
    r.answer = (_x, i) => {
      if (i === 1) {
        relay.hang();
        setTimeout(() => relay.heal(), 1000);
      }
      return { status: 204 };
    };
    aDispatcher(r, { db: viaRelay, timeoutMs: 2_000, leaseSlackMs: 6_000 });
    await phase(e.organization_id, "ses_settle", undefined, "Pending");
    await until(
      async () => (await db()("webhook_deliveries").where({ endpoint_id: e.id }).first("state"))?.state === "succeeded",
    );
    // Settled by its first attempt: without the retry the claim lapses and the receiver gets it again.
    const delivery = await db()("webhook_deliveries").where({ endpoint_id: e.id }).first("attempts");
    expect(delivery?.attempts).toBe(1);
    expect(r.received).toHaveLength(1);
  });

  it("loses nothing when a dispatcher is killed with SIGKILL mid-delivery; the receiver dedupes by webhook-id", async () => {
    const r = await aReceiver();
    let hungOnce = false;
    r.answer = () => {
      if (!hungOnce) {
        hungOnce = true;
        return "hang";
      }
      return { status: 204 };
    };
    const e = await anEndpoint(r.url);
    for (let s = 0; s < 4; s++) {
      for (const [prev, next] of LIFECYCLE.slice(0, 4)) await phase(e.organization_id, `ses_k${s}`, prev, next);
    }
    const expected = await db()("webhook_deliveries").where({ endpoint_id: e.id }).pluck("event_id");
    expect(expected).toHaveLength(12);

    const script = fileURLToPath(new URL("./dispatcherChild.test-support.ts", import.meta.url));
    const child: ChildProcess = spawn(process.execPath, [script], {
      env: {
        ...process.env,
        BERTH_HOOKS_DB: database.url,
        BERTH_HOOKS_CA: r.ca,
        // Its claims lapse 3 s after they were made (timeout + slack): then another dispatcher may take them.
        BERTH_HOOKS_TIMEOUT_MS: "2500",
        BERTH_HOOKS_LEASE_SLACK_MS: "500",
      },
      stdio: ["ignore", "pipe", "inherit"],
    });
    stops.push(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    });
    await r.until((rs) => rs.length >= 4, 20_000); // the hung one and others in flight or done
    child.kill("SIGKILL");
    await new Promise((res) => child.once("exit", res));
    const before = r.received.length;

    // A new dispatcher takes over what the dead one held once its claims lapse.
    aDispatcher(r);
    await until(
      async () =>
        (await db()("webhook_deliveries").where({ endpoint_id: e.id, state: "pending" }).count({ c: "*" }))[0]?.c ===
        "0",
    );
    const unique = new Set(r.received.map((x) => x.id));
    expect([...unique].sort()).toEqual([...expected].sort());
    expect(r.received.length).toBeGreaterThan(unique.size); // the hung one came twice: dedupe by webhook-id
    expect(before).toBeLessThan(r.received.length);
    const verifier = new Webhook(e.secret);
    for (const x of r.received) verifier.verify(x.body, x.headers);
  });

  describe("secrets sealed at rest", () => {
    const key = (id: string, fill: number) => ({ id, key: Buffer.alloc(32, fill) });
    const k1 = key("k1", 1);
    const k2 = key("k2", 2);

    it("signs with the secret it opens, and seals plain and older-key secrets again under the first key", async () => {
      const r = await aReceiver();
      const legacy = await anEndpoint(r.url); // stored plain, as before encryption
      const plain = newWebhookSecret();
      const sealed = await anEndpoint(r.url);
      await db()("webhook_endpoints")
        .where({ id: sealed.id })
        .update({ secret: new WebhookSecretBox([k1]).seal(plain, sealed.id) });
      // The new key first, the old one still listed: the dispatcher re-seals both under k2 when it starts.
      const box = new WebhookSecretBox([k2, k1]);
      aDispatcher(r, { secrets: box });
      await until(async () =>
        (await db()("webhook_endpoints").whereIn("id", [legacy.id, sealed.id]).pluck("secret")).every((v: string) =>
          v.startsWith("enc:v1:k2:"),
        ),
      );
      const stored = (await db()("webhook_endpoints").whereIn("id", [legacy.id, sealed.id])) as WebhookEndpointRow[];
      for (const row of stored) {
        expect(row.secret).not.toContain(row.id === legacy.id ? legacy.secret : plain);
        expect(box.open(row.secret, row.id)).toBe(row.id === legacy.id ? legacy.secret : plain);
      }
      // A sealed value does not open for another endpoint.
      expect(() => box.open(stored[0]?.secret ?? "", "whk_other")).toThrow(SecretUnreadable);

      await phase(legacy.organization_id, "ses_seal_a", undefined, "Pending");
      await phase(sealed.organization_id, "ses_seal_b", undefined, "Pending");
      await r.until((rs) => rs.length >= 2);
      const bySession = (s: string) =>
        r.received.find((x) => (JSON.parse(x.body) as { data: { session_id: string } }).data.session_id === s);
      const a = bySession("ses_seal_a");
      const b = bySession("ses_seal_b");
      new Webhook(legacy.secret).verify(a?.body ?? "", a?.headers ?? {});
      new Webhook(plain).verify(b?.body ?? "", b?.headers ?? {});
    });

    it("fails the delivery, and logs why, when the secret's key is not listed", async () => {
      const r = await aReceiver();
      const e = await anEndpoint(r.url);
      await db()("webhook_endpoints")
        .where({ id: e.id })
        .update({ secret: new WebhookSecretBox([k1]).seal(e.secret, e.id) });
      aDispatcher(r, { secrets: new WebhookSecretBox([k2]), retryScheduleMs: [0, 60_000] });
      await phase(e.organization_id, "ses_unlisted", undefined, "Pending");
      await until(async () => (await db()("webhook_attempts").where({ endpoint_id: e.id }).first()) !== undefined);
      const a = await db()("webhook_attempts").where({ endpoint_id: e.id }).first();
      expect(a.outcome).toBe("failed");
      expect(a.error).toContain("secret_unreadable");
      expect(a.error).toContain("k1");
      expect(r.received).toHaveLength(0);
      // Left as it was: the key that sealed it may be listed again.
      expect((await db()("webhook_endpoints").where({ id: e.id }).first()).secret).toMatch(/^enc:v1:k1:/);
    });
  });
});

async function until(pred: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await pred())) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((res) => setTimeout(res, 50));
  }
}
