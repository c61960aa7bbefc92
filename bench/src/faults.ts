// biome-ignore-all lint/suspicious/noExplicitAny: the bench reads the API's JSON as it comes
// A fault report: each fault run against the 1+2 fleet (a management cluster, two GPU clusters; the
// sessions bed of e2e/src/sessions/harness.ts) with the API, the worker and gpu-a's operator as separate
// processes (split-processes.ts), so that a kill is a real SIGKILL. One line per fault with its figures,
// ending with lost=… duplicated=… (a lost item is an accepted create whose session does not exist, or a
// session whose pod went away; a duplicate is a second session for one create or a second pod for one
// session, counted by the session's label, terminating pods included).
//   node bench/src/faults.ts [--only pg,mgmt,gpu,worker,operator,silent,api] [--burst 500] [--silent 60]
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { freePort, type PostgresServer, startPostgres } from "@berth/api/db/server";
import { LABELS } from "@berth/crds";
import { H100, L4, type SessionsBed, startSessionsBed } from "@berth/e2e/sessions";
import { type Split, startSplit } from "./split-processes.ts";

const { values } = parseArgs({
  options: {
    only: { type: "string", default: "pg,mgmt,gpu,worker,operator,silent,api" },
    burst: { type: "string", default: "500" },
    silent: { type: "string", default: "60" },
  },
});
const only = new Set(values.only.split(","));
const BURST = Number(values.burst);
const SILENT_S = Number(values.silent);
const h100 = { offering: "h100", preset: "gpu-small", image: "terminal" };
const l4 = { offering: "l4", preset: "gpu-small", image: "terminal" };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const out = (s: string) => process.stdout.write(`${s}\n`);

const dir = mkdtempSync(join(tmpdir(), "berth-faults-"));
const pgPort = await freePort();
let pg: PostgresServer = await startPostgres({ dataDir: join(dir, "pg"), port: pgPort });
// The bed's databases are made on this server (db.test-support.ts), so this script may stop and restart it.
process.env.DATABASE_URL = pg.url;

let bed: SessionsBed | undefined;
let split: Split | undefined;
const stopAll = async () => {
  await split?.stop();
  await bed?.stop();
  await pg.stop();
  rmSync(dir, { recursive: true, force: true });
};
try {
  bed = await startSessionsBed({
    fleet: {
      clusters: [
        { name: "mgmt", kind: "management" },
        {
          name: "gpu-a",
          kind: "gpu",
          nodes: Array.from({ length: 4 }, (_, i) => ({ name: `gpu-a-${i + 1}`, gpuModel: H100, gpuCount: 8 })),
          gpuRuntimeClass: true,
          gpuDevicePlugin: true,
        },
        {
          name: "gpu-b",
          kind: "gpu",
          nodes: [{ name: "gpu-b-1", gpuModel: L4, gpuCount: 2 }],
          gpuRuntimeClass: true,
          gpuDevicePlugin: true,
        },
      ],
    },
  });
  const b = bed;
  split = await startSplit(b, { gpuCluster: "gpu-a", onSignal: stopAll });
  const s = split;
  await s.reissueTokens([b.superAdmin, b.orgAdmin, b.alice, b.bob]);
  const users = [b.alice, b.bob, b.orgAdmin];
  const db = b.t.database.db;

  const call = async (
    token: string,
    method: string,
    path: string,
    json?: unknown,
    headers?: Record<string, string>,
  ) => {
    const h: Record<string, string> = { Authorization: `Bearer ${token}`, ...(headers ?? {}) };
    if (json !== undefined) h["Content-Type"] = "application/json";
    const res = await fetch(s.apiUrl + path, {
      method,
      headers: h,
      signal: AbortSignal.timeout(30_000),
      ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
    });
    const text = await res.text();
    let body: any = null;
    try {
      body = text === "" ? null : JSON.parse(text);
    } catch {
      body = text;
    }
    return { status: res.status, body };
  };
  /** A create that retries (same Idempotency-Key) through refusals of the moment: 503, a dropped connection. */
  const createUntilAnswered = async (token: string, json: unknown, key: string, timeoutMs = 120_000) => {
    for (const t0 = Date.now(); Date.now() - t0 < timeoutMs; ) {
      try {
        const r = await call(token, "POST", "/api/v1/sessions", json, { "Idempotency-Key": key });
        if (r.status !== 503 && r.status !== 502) return r;
      } catch {
        // the API is down: try again
      }
      await sleep(250);
    }
    throw new Error(`create ${key} got no answer within ${timeoutMs} ms`);
  };
  const waitFor = async (token: string, id: string, pred: (x: any) => boolean, what: string, timeoutMs = 120_000) => {
    for (const t0 = Date.now(); ; ) {
      try {
        const r = await call(token, "GET", `/api/v1/sessions/${id}`);
        if (r.status === 200 && pred(r.body)) return r.body;
      } catch {
        // down for a moment
      }
      if (Date.now() - t0 > timeoutMs) throw new Error(`${id} not ${what} within ${timeoutMs} ms`);
      await sleep(200);
    }
  };
  /** Sessions made per display name (one create each): 0 is lost, more than 1 duplicated. */
  const rowsByName = async (names: readonly string[]) => {
    const rows = (await db("sessions").whereIn("display_name", names).select("display_name")) as {
      display_name: string;
    }[];
    const n = new Map<string, number>();
    for (const r of rows) n.set(r.display_name, (n.get(r.display_name) ?? 0) + 1);
    return n;
  };
  /** Pods per session on a GPU cluster, by the session's label, terminating ones included. */
  const podsPerSession = async (cluster: string) => {
    const n = new Map<string, number>();
    for (const p of await b.pods(cluster)) {
      const key = p.labels[LABELS.session] ?? p.name;
      n.set(key, (n.get(key) ?? 0) + 1);
    }
    return n;
  };
  const podDuplicates = async (cluster: string) =>
    [...(await podsPerSession(cluster)).values()].reduce((a, c) => a + Math.max(0, c - 1), 0);
  /** Creates `n` sessions with unique names (and keys), waits for them Running; answers their ids and names. */
  const runningSessions = async (tag: string, n: number, offering = h100) => {
    const made: { id: string; name: string; token: string }[] = [];
    for (let i = 0; i < n; i++) {
      const u = users[i % users.length] ?? b.alice;
      const name = `${tag}-${i}`;
      const r = await createUntilAnswered(u.token, { ...offering, name }, name);
      if (r.status !== 201) throw new Error(`${name}: ${r.status} ${JSON.stringify(r.body)}`);
      made.push({ id: r.body.id, name, token: u.token });
    }
    for (const m of made) await waitFor(m.token, m.id, (x) => x.phase === "Running", "Running");
    return made;
  };
  // No per-user limits: the faults count lost and duplicated creates, not the policy's refusals.
  const policy = await call(b.superAdmin.token, "PATCH", "/api/v1/resource-policies/global", { limits: {} });
  if (policy.status !== 200) throw new Error(`the global policy: ${policy.status} ${JSON.stringify(policy.body)}`);
  const verdict = (lost: number, dup: number, lostWhat = "") =>
    `lost=${lost}${lost > 0 && lostWhat ? ` (${lostWhat})` : ""} duplicated=${dup}`;

  out(
    `# faults against the 1+2 fleet (mgmt; gpu-a 4×8 H100 with its operator, the API and the worker as processes; gpu-b in-process); ${cpus().length} CPUs, load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
  );
  const run = async (key: string, fn: () => Promise<string>) => {
    if (!only.has(key)) return;
    const t0 = Date.now();
    try {
      out(`${await fn()}   [${((Date.now() - t0) / 1000).toFixed(0)} s]`);
    } catch (err) {
      out(`${key}: NOT MEASURED: ${(err as Error).message.split("\n")[0]}`);
    }
  };

  await run("pg", async () => {
    // Load: reads every 50 ms; a create every 500 ms, each retried with its key until answered.
    let stopLoad = false;
    const statuses: { at: number; status: number }[] = [];
    const reader = (async () => {
      while (!stopLoad) {
        const at = Date.now();
        try {
          statuses.push({ at, status: (await call(b.alice.token, "GET", "/api/v1/sessions?size=5")).status });
        } catch {
          statuses.push({ at, status: 0 });
        }
        await sleep(50);
      }
    })();
    const names: string[] = [];
    const accepted = new Set<string>();
    const other: string[] = [];
    const creates: Promise<void>[] = [];
    const creator = (async () => {
      for (let i = 0; !stopLoad; i++) {
        const name = `pg-${i}`;
        names.push(name);
        creates.push(
          createUntilAnswered(b.bob.token, { ...l4, name }, name, 180_000).then(
            (r) => {
              if (r.status === 201) accepted.add(name);
              else other.push(`${r.status} ${r.body?.error?.code ?? ""}`.trim());
              return undefined;
            },
            () => {
              other.push("no answer");
            },
          ),
        );
        await sleep(500);
      }
    })();
    await sleep(3000);
    const down = Date.now();
    await pg.stop();
    await sleep(5000);
    const up = Date.now();
    pg = await startPostgres({ dataDir: join(dir, "pg"), port: pgPort });
    const restarted = Date.now();
    for (const t0 = Date.now(); Date.now() - t0 < 60_000; ) {
      if (statuses.some((x) => x.at > restarted && x.status === 200)) break;
      await sleep(100);
    }
    await sleep(3000);
    stopLoad = true;
    await Promise.all([reader, creator]);
    await Promise.allSettled(creates);
    const firstBad = statuses.find((x) => x.at >= down && x.status !== 200);
    const firstOk = statuses.find((x) => x.at >= restarted && x.status === 200);
    const during = statuses.filter((x) => x.at >= down && x.at < up);
    const counts = await rowsByName(names);
    const lost = [...accepted].filter((n) => (counts.get(n) ?? 0) === 0).length;
    const dup = [...counts.values()].reduce((a, c) => a + Math.max(0, c - 1), 0);
    const codes = [...new Set(during.map((x) => x.status))].join("/");
    return `postgres stopped 5 s and restarted under load: first refusal ${firstBad ? `${firstBad.status} after ${firstBad.at - down} ms` : "none"} (answers while down: ${codes}); first 200 ${firstOk ? `${((firstOk.at - restarted) / 1000).toFixed(1)} s` : "never (60 s)"} after it was back (restart itself ${((restarted - up) / 1000).toFixed(1)} s); creates ${accepted.size}/${names.length} accepted${other.length ? ` (others: ${[...new Set(other)].join(", ")})` : ""}, ${verdict(lost, dup)}`;
  });

  const restartApiserver = async (cluster: "mgmt" | "gpu-a", label: string) => {
    const before = await runningSessions(`${label}-before`, 2);
    const t0 = Date.now();
    await b.fleet.cluster(cluster).restartApiServer();
    const restarted = Date.now();
    const name = `${label}-after`;
    const r = await createUntilAnswered(b.alice.token, { ...h100, name }, name);
    if (r.status !== 201) throw new Error(`${name}: ${r.status} ${JSON.stringify(r.body)}`);
    await waitFor(b.alice.token, r.body.id, (x) => x.phase === "Running", "Running");
    const ready = Date.now();
    const still = await Promise.all(
      before.map((m) => call(m.token, "GET", `/api/v1/sessions/${m.id}`).then((x) => x.body?.phase)),
    );
    const lost = still.filter((p) => p !== "Running").length;
    const counts = await rowsByName([...before.map((m) => m.name), name]);
    const dup = [...counts.values()].reduce((a, c) => a + Math.max(0, c - 1), 0) + (await podDuplicates("gpu-a"));
    return `${label} apiserver restarted: down and back in ${((restarted - t0) / 1000).toFixed(1)} s; a new session Running ${((ready - restarted) / 1000).toFixed(1)} s after; ${before.length} running sessions kept running: ${before.length - lost}; ${verdict(lost, dup, "sessions no longer Running")}`;
  };
  await run("mgmt", () => restartApiserver("mgmt", "management"));
  await run("gpu", () => restartApiserver("gpu-a", "gpu-a"));

  await run("worker", async () => {
    const first = s.worker;
    if (!first) throw new Error("no worker");
    const second = await s.startWorker("worker-split-2");
    const t0 = Date.now();
    first.proc.kill("SIGKILL");
    await second.line("session controller started", 120_000);
    const led = Date.now();
    const made = await runningSessions("worker", 5);
    const ready = Date.now();
    const counts = await rowsByName(made.map((m) => m.name));
    const dup = [...counts.values()].reduce((a, c) => a + Math.max(0, c - 1), 0) + (await podDuplicates("gpu-a"));
    return `worker leader SIGKILLed: the standby led ${((led - t0) / 1000).toFixed(1)} s later (lease 15 s); 5 new sessions Running ${((ready - led) / 1000).toFixed(1)} s after; ${verdict(0, dup)}`;
  });

  await run("operator", async () => {
    const before = await runningSessions("operator-before", 3);
    const uids = new Map((await b.pods("gpu-a")).map((p) => [p.name, p.uid]));
    const t0 = Date.now();
    s.operator.proc.kill("SIGKILL");
    const name = "operator-during";
    const r = await createUntilAnswered(b.alice.token, { ...h100, name }, name);
    if (r.status !== 201) throw new Error(`${name}: ${r.status}`);
    await sleep(2000);
    await s.restartOperator();
    const restarted = Date.now();
    await waitFor(b.alice.token, r.body.id, (x) => x.phase === "Running", "Running");
    const ready = Date.now();
    const after = new Map((await b.pods("gpu-a")).map((p) => [p.name, p.uid]));
    const lost = before.filter((m) => {
      const pod = m.id.replace("_", "-");
      return !after.has(pod) || after.get(pod) !== uids.get(pod);
    }).length;
    const dup = await podDuplicates("gpu-a");
    return `gpu-a operator SIGKILLed (a create made while it was down): back ${((restarted - t0) / 1000).toFixed(1)} s later, that session Running ${((ready - restarted) / 1000).toFixed(1)} s after; ${before.length} running pods untouched: ${before.length - lost}; ${verdict(lost, dup, "pods replaced")}`;
  });

  await run("silent", async () => {
    const [m] = await runningSessions("silent", 1);
    if (!m) throw new Error("no session");
    const session = m.id;
    const pid = s.operator.pid;
    const t0 = Date.now();
    process.kill(pid, "SIGSTOP");
    let unknownAfter = Number.NaN;
    try {
      await waitFor(m.token, session, (x) => x.phase === "Unknown", "Unknown", SILENT_S * 1000 + 60_000);
      unknownAfter = Date.now() - t0;
      const left = SILENT_S * 1000 - (Date.now() - t0);
      if (left > 0) await sleep(left);
    } finally {
      process.kill(pid, "SIGCONT");
    }
    const back = Date.now();
    const resumed = await waitFor(m.token, session, (x) => x.phase === "Running", "Running again", 120_000);
    const reconciled = Date.now();
    const charged = (await db("ledger_transactions")
      .where({ kind: "charge", session_id: session })
      .whereBetween("created_at", [new Date(t0 + 5000), new Date(back)])
      .count({ n: "*" })) as { n: string }[];
    const lastSample = (await db("usage_samples")
      .where({ session: session.replace("_", "-") })
      .where("period_end", "<=", new Date(back))
      .max({ end: "period_end" })) as { end: Date | null }[];
    const dup = await podDuplicates("gpu-a");
    const chargedWhileSilent = Number(charged[0]?.n ?? 0);
    return `gpu-a silent ${SILENT_S} s (operator SIGSTOPped): session Unknown after ${(unknownAfter / 1000).toFixed(1)} s; charges written while silent: ${chargedWhileSilent}; last sample ended ${lastSample[0]?.end ? `${((t0 - new Date(lastSample[0].end).getTime()) / 1000).toFixed(0)} s before the silence` : "n/a"}; Running again ${((reconciled - back) / 1000).toFixed(1)} s after it returned (started_at kept: ${resumed.started_at !== null}); ${verdict(0, dup)}`;
  });

  await run("api", async () => {
    const names = Array.from({ length: BURST }, (_, i) => `burst-${i}`);
    const first = new Map<string, number>(); // name -> status of the first answer (0: none)
    let answered = 0;
    let killedAt = 0;
    const burstStart = Date.now();
    const kill = (async () => {
      while (answered < BURST / 3) await sleep(20);
      killedAt = Date.now();
      s.api.proc.kill("SIGKILL");
    })();
    let next = 0;
    const workers = Array.from({ length: 20 }, async () => {
      for (let i = next++; i < BURST; i = next++) {
        const name = names[i] as string;
        const u = users[i % users.length] ?? b.alice;
        try {
          const r = await call(u.token, "POST", "/api/v1/sessions", { ...l4, name }, { "Idempotency-Key": name });
          first.set(name, r.status);
        } catch {
          first.set(name, 0);
        }
        answered++;
      }
    });
    await Promise.all(workers);
    await kill;
    const t0 = Date.now();
    await s.restartApi();
    const back = Date.now();
    // Every create without an answer is retried with its key, as a client would.
    const unanswered = names.filter((n) => first.get(n) === 0 || first.get(n) === 503);
    const retried = new Map<string, number>();
    const retriedOther: string[] = [];
    for (const n of unanswered) {
      const i = names.indexOf(n);
      const u = users[i % users.length] ?? b.alice;
      const r = await createUntilAnswered(u.token, { ...l4, name: n }, n);
      retried.set(n, r.status);
      if (r.status !== 201) retriedOther.push(`${r.status} ${r.body?.error?.code ?? ""}`.trim());
    }
    const counts = await rowsByName(names);
    const accepted = names.filter((n) => first.get(n) === 201 || retried.get(n) === 201);
    const lost = accepted.filter((n) => (counts.get(n) ?? 0) === 0).length;
    const dup = [...counts.values()].reduce((a, c) => a + Math.max(0, c - 1), 0);
    // Half-made: a session row whose Session resource never appears.
    const made = (await db("sessions").whereIn("display_name", names).select("id", "owner_id")) as {
      id: string;
      owner_id: string;
    }[];
    let half = 0;
    const tokenOf = new Map(users.map((u) => [u.id, u.token]));
    for (const row of made) {
      const token = tokenOf.get(row.owner_id) ?? b.superAdmin.token;
      const r = await call(token, "GET", `/api/v1/sessions/${row.id}/resource`);
      if (r.status === 404) half++;
    }
    const refusedFirst = [...first.values()].filter((x) => x !== 201 && x !== 0 && x !== 503).length;
    return `API SIGKILLed after ${BURST - unanswered.length - refusedFirst}/${BURST} creates accepted (${((killedAt - burstStart) / 1000).toFixed(1)} s into the burst): back in ${((back - t0) / 1000).toFixed(1)} s; ${unanswered.length} unanswered retried with their keys (${[...retried.values()].filter((x) => x === 201).length} → 201${retriedOther.length ? `, the others: ${[...new Set(retriedOther)].join(", ")}` : ""}); ${accepted.length} accepted, ${made.length} sessions exist, ${refusedFirst} refused (quota/policy), half-made ${half}; ${verdict(lost, dup)}`;
  });
} finally {
  await stopAll();
}
