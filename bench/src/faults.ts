// A fault report: each fault run against the 1+2 fleet (a management cluster, two GPU clusters; the
// sessions bed of e2e/src/sessions/harness.ts) with the API, the worker and gpu-a's operator as separate
// processes (split-processes.ts), so that a kill is a real SIGKILL. One line per fault with its figures,
// ending with lost=… duplicated=… (a lost item is an accepted create whose session does not exist, or a
// session whose pod went away; a duplicate is a second session for one create or a second pod for one
// session, counted by the session's label, terminating pods included). The silent cluster's line also
// follows its session's bill through the silence, from the ledger: there lost counts seconds of the pod's
// run never charged and duplicated adds seconds charged twice. gpu-a's operator cuts usage every
// `--usage-interval` seconds (5 s: a session charges closed intervals within the fault, not after minutes).
//   node bench/src/faults.ts [--only pg,pg-hang,mgmt,gpu,worker,operator,silent,api] [--burst 500] [--silent 60]
//     [--pg-down 5] (seconds Postgres stays stopped; past the pool's 20 s acquire timeout shows what a long outage answers)
//     [--pg-hang 40] (seconds Postgres answers nothing and refuses nothing, a partition; past the 30 s query timeout)
//     [--usage-interval 5]
import { cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import type { BodyOf, ResponseOf } from "@berth/console/client";
import { type MeteredPodView, podRun } from "@berth/controllers";
import { LABELS } from "@berth/crds";
import { adminKube, gpuCluster, H100, L4, MANAGEMENT, SESSIONS_NS } from "@berth/e2e/sessions";
import { type Answer, answering, causeOf } from "./api.ts";
import {
  type Bill,
  billOf as billOfIn,
  covered,
  type FaultBed,
  podsPerSession,
  sleep,
  startFaultBed,
} from "./fault-bed.ts";
import { upperPercentile } from "./kit/percentile.ts";

const { values } = parseArgs({
  options: {
    only: { type: "string", default: "pg,pg-hang,mgmt,gpu,worker,operator,silent,api" },
    burst: { type: "string", default: "500" },
    silent: { type: "string", default: "60" },
    "pg-down": { type: "string", default: "5" },
    "pg-hang": { type: "string", default: "40" },
    "usage-interval": { type: "string", default: "5" },
  },
});
const only = new Set(values.only.split(","));
const BURST = Number(values.burst);
const SILENT_S = Number(values.silent);
const PG_DOWN_S = Number(values["pg-down"]);
const PG_HANG_S = Number(values["pg-hang"]);
const USAGE_MS = Number(values["usage-interval"]) * 1000;
for (const [flag, v] of [
  ["--burst", BURST],
  ["--silent", SILENT_S],
  ["--pg-down", PG_DOWN_S],
  ["--pg-hang", PG_HANG_S],
  ["--usage-interval", USAGE_MS],
] as const)
  if (!Number.isFinite(v) || v <= 0) {
    process.stderr.write(`${flag} takes a positive number\n`);
    process.exit(2);
  }
const h100 = { offering: "h100", preset: "gpu-small", image: "terminal" };
const l4 = { offering: "l4", preset: "gpu-small", image: "terminal" };
const out = (s: string) => process.stdout.write(`${s}\n`);

let fb: FaultBed | undefined;
try {
  fb = await startFaultBed({
    fleet: {
      clusters: [
        MANAGEMENT,
        {
          name: "gpu-a",
          kind: "gpu",
          nodes: Array.from({ length: 4 }, (_, i) => ({ name: `gpu-a-${i + 1}`, gpuModel: H100, gpuCount: 8 })),
          gpuRuntimeClass: true,
          gpuDevicePlugin: true,
        },
        gpuCluster("gpu-b", [{ name: "gpu-b-1", gpuModel: L4, gpuCount: 2 }]),
      ],
    },
    gpuCluster: "gpu-a",
    usageIntervalMs: USAGE_MS,
  });
  const f = fb;
  const b = f.bed;
  const s = f.split;
  await s.reissueTokens([b.superAdmin, b.orgAdmin, b.alice, b.bob]);
  const users = [b.alice, b.bob, b.orgAdmin];
  const db = b.t.database.db;

  const call = answering(() => s.apiUrl);
  /** A create that retries (same Idempotency-Key) through refusals of the moment: 503, a dropped connection. */
  const createUntilAnswered = async (
    token: string,
    body: BodyOf<"createSession">,
    key: string,
    timeoutMs = 120_000,
  ): Promise<Answer<"createSession">> => {
    for (const t0 = Date.now(); Date.now() - t0 < timeoutMs; ) {
      try {
        const r = await call({ token }, "createSession", { body }, { idempotencyKey: key });
        if (r.status !== 503 && r.status !== 502) return r;
      } catch {
        // the API is down: try again
      }
      await sleep(250);
    }
    throw new Error(`create ${key} got no answer within ${timeoutMs} ms`);
  };
  const waitFor = async (
    token: string,
    sessionId: string,
    pred: (x: ResponseOf<"getSession">) => boolean,
    what: string,
    timeoutMs = 120_000,
  ) => {
    for (const t0 = Date.now(); ; ) {
      try {
        const r = await call({ token }, "getSession", { params: { sessionId } });
        if (r.ok && r.status === 200 && pred(r.body)) return r.body;
      } catch {
        // down for a moment
      }
      if (Date.now() - t0 > timeoutMs) throw new Error(`${sessionId} not ${what} within ${timeoutMs} ms`);
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
  const podDuplicates = async (cluster: string) =>
    [...(await podsPerSession(b, cluster)).values()].reduce((a, c) => a + Math.max(0, c - 1), 0);
  /** Creates `n` sessions with unique names (and keys), waits for them Running; answers their ids and names. */
  const runningSessions = async (tag: string, n: number, offering = h100) => {
    const made: { id: string; name: string; token: string }[] = [];
    for (let i = 0; i < n; i++) {
      const u = users[i % users.length] ?? b.alice;
      const name = `${tag}-${i}`;
      const r = await createUntilAnswered(u.token, { ...offering, name }, name);
      if (!r.ok || r.status !== 201) throw new Error(`${name}: ${r.status} ${JSON.stringify(r)}`);
      made.push({ id: r.body.id, name, token: u.token });
    }
    for (const m of made) await waitFor(m.token, m.id, (x) => x.phase === "Running", "Running");
    return made;
  };
  // No per-user limits: the faults count lost and duplicated creates, not the policy's refusals.
  const policy = await call(b.superAdmin, "updateResourcePolicy", { params: { name: "global" }, body: { limits: {} } });
  if (policy.status !== 200) throw new Error(`the global policy: ${policy.status} ${JSON.stringify(policy)}`);
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

  /** A database fault under load: a read every 100 ms, a create every 500 ms (each retried with its key). */
  const databaseFault = async (fault: {
    /** Names the creates of this fault (pg-0, pg-1, …). */
    tag: string;
    what: string;
    seconds: number;
    begin(): Promise<void>;
    end(): Promise<string>;
  }) => {
    let stopLoad = false;
    const statuses: { at: number; status: number; ms: number }[] = [];
    // A read every 100 ms, each on its own (a waiting read does not hold the next back).
    const reads: Promise<void>[] = [];
    const reader = (async () => {
      while (!stopLoad) {
        const at = Date.now();
        reads.push(
          call(b.alice, "listSessions", { query: { size: 5 } }).then(
            (r) => void statuses.push({ at, status: r.status, ms: Date.now() - at }),
            // no answer at all (within the client's 90 s): counted as status 0
            () => void statuses.push({ at, status: 0, ms: Date.now() - at }),
          ),
        );
        await sleep(100);
      }
    })();
    const names: string[] = [];
    const accepted = new Set<string>();
    const other: string[] = [];
    const creates: Promise<void>[] = [];
    const creator = (async () => {
      for (let i = 0; !stopLoad; i++) {
        const name = `${fault.tag}-${i}`;
        names.push(name);
        creates.push(
          createUntilAnswered(b.bob.token, { ...l4, name }, name, 180_000).then(
            (r) => {
              if (r.status === 201) accepted.add(name);
              else other.push(causeOf(r));
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
    await fault.begin();
    await sleep(fault.seconds * 1000);
    const up = Date.now();
    const ended = await fault.end();
    const back = Date.now();
    for (const t0 = Date.now(); Date.now() - t0 < 60_000; ) {
      if (statuses.some((x) => x.at > back && x.status === 200)) break;
      await sleep(100);
    }
    await sleep(3000);
    stopLoad = true;
    await Promise.all([reader, creator]);
    await Promise.allSettled([...creates, ...reads]);
    statuses.sort((x, y) => x.at - y.at);
    // The first refusal as the caller saw it: the earliest answer, not the earliest read begun.
    const firstBad = statuses
      .filter((x) => x.at + x.ms >= down && x.status !== 200)
      .sort((x, y) => x.at + x.ms - (y.at + y.ms))[0];
    const firstOk = statuses.find((x) => x.at >= back && x.status === 200);
    const during = statuses.filter((x) => x.at >= down && x.at < up);
    const times = during.map((x) => x.ms).sort((x, y) => x - y);
    const counts = await rowsByName(names);
    const lost = [...accepted].filter((n) => (counts.get(n) ?? 0) === 0).length;
    const dup = [...counts.values()].reduce((a, c) => a + Math.max(0, c - 1), 0);
    const codes = [...new Set(during.map((x) => x.status))]
      .map((c) => `${during.filter((x) => x.status === c).length}×${c}`)
      .join(" ");
    const median = upperPercentile(times, 50, 0);
    const slowest = times.at(-1) ?? 0;
    return `${fault.what} ${fault.seconds} s under load: first refusal ${firstBad ? `${firstBad.status} ${firstBad.at + firstBad.ms - down} ms in` : "none"} (${during.length} reads begun while it lasted: ${codes}, answered in ${median} ms at the median, ${slowest} ms at the slowest); first 200 ${firstOk ? `${((firstOk.at - back) / 1000).toFixed(1)} s` : "never (60 s)"} after it was back (${ended}); creates ${accepted.size}/${names.length} accepted${other.length ? ` (others: ${[...new Set(other)].join(", ")})` : ""}, ${verdict(lost, dup)}`;
  };

  await run("pg", () =>
    databaseFault({
      tag: "pg",
      what: "postgres stopped and restarted",
      seconds: PG_DOWN_S,
      begin: () => f.stopPostgres(),
      end: async () => `restart itself ${((await f.startPostgresAgain()) / 1000).toFixed(1)} s`,
    }),
  );
  await run("pg-hang", () =>
    databaseFault({
      tag: "pg-hang",
      what: "postgres answering nothing and refusing nothing (a partition)",
      seconds: PG_HANG_S,
      begin: async () => f.hangPostgres(),
      end: async () => {
        f.healPostgres();
        return "what was held delivered";
      },
    }),
  );

  const restartApiserver = async (cluster: "mgmt" | "gpu-a", label: string) => {
    const before = await runningSessions(`${label}-before`, 2);
    const t0 = Date.now();
    await f.restartApiserver(cluster);
    const restarted = Date.now();
    const name = `${label}-after`;
    const r = await createUntilAnswered(b.alice.token, { ...h100, name }, name);
    if (!r.ok || r.status !== 201) throw new Error(`${name}: ${r.status} ${JSON.stringify(r)}`);
    await waitFor(b.alice.token, r.body.id, (x) => x.phase === "Running", "Running");
    const ready = Date.now();
    const still = await Promise.all(
      before.map((m) =>
        call(m, "getSession", { params: { sessionId: m.id } }).then((x) => (x.ok ? x.body.phase : undefined)),
      ),
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
    f.killOperator();
    const name = "operator-during";
    const r = await createUntilAnswered(b.alice.token, { ...h100, name }, name);
    if (!r.ok || r.status !== 201) throw new Error(`${name}: ${r.status}`);
    await sleep(2000);
    await f.restartOperator();
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

  const billOf = (session: string) => billOfIn(db, session);
  /** The session's bill once `pred` holds (read every 100 ms). */
  const billWhen = async (session: string, pred: (b: Bill) => boolean, timeoutMs: number, what: string) => {
    for (const t0 = Date.now(); ; await sleep(100)) {
      const bill = await billOf(session);
      if (pred(bill)) return bill;
      if (Date.now() - t0 > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    }
  };
  const secs = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

  await run("silent", async () => {
    const [m] = await runningSessions("silent", 1);
    if (!m) throw new Error("no session");
    const session = m.id;
    // Closed intervals charged before the silence, which starts just after a charge: no sample in flight.
    const seen = (
      await billWhen(
        session,
        (x) => x.charges.length >= 3 && x.unbilled === 0,
        4 * USAGE_MS + 30_000,
        "three usage intervals charged",
      )
    ).charges.length;
    await billWhen(
      session,
      (x) => x.charges.length > seen && x.unbilled === 0,
      2 * USAGE_MS + 30_000,
      "a fresh charge",
    );
    const t0 = Date.now();
    const wake = f.silenceOperator();
    let unknownAfter = Number.NaN;
    let atSilence: Bill;
    let atItsEnd: Bill;
    try {
      atSilence = await billOf(session);
      await waitFor(m.token, session, (x) => x.phase === "Unknown", "Unknown", SILENT_S * 1000 + 60_000);
      unknownAfter = Date.now() - t0;
      const left = SILENT_S * 1000 - (Date.now() - t0);
      if (left > 0) await sleep(left);
      atItsEnd = await billOf(session);
    } finally {
      wake();
    }
    const back = Date.now();
    const resumed = await waitFor(m.token, session, (x) => x.phase === "Running", "Running again", 120_000);
    const reconciled = Date.now();
    // Charging resumes: wait until two intervals after the return are charged and nothing is left unbilled.
    const after = await billWhen(
      session,
      (x) => x.until >= back + 2 * USAGE_MS && x.unbilled === 0,
      4 * USAGE_MS + 90_000,
      "charges after the cluster returned",
    );
    // The pod's run as the operator meters it (its container's start), up to the last charged moment.
    const k = adminKube(b.fleet.cluster("gpu-a"));
    let pods: MeteredPodView[];
    try {
      const selector = encodeURIComponent(`${LABELS.sessionId}=${session}`);
      pods = (
        await k.json<{ items: MeteredPodView[] }>(
          "GET",
          `/api/v1/namespaces/${SESSIONS_NS}/pods?labelSelector=${selector}`,
        )
      ).items;
    } finally {
      k.close();
    }
    const runs = pods.flatMap((p) => podRun(p, LABELS.sessionId) ?? []);
    const start = Math.min(...runs.map((r) => r.startMs ?? Number.POSITIVE_INFINITY));
    if (runs.length !== 1 || !Number.isFinite(start)) throw new Error(`${runs.length} pods for ${session}`);
    const ran = after.until - start;
    const gap = ran - covered(after.charges, start, after.until);
    const twice = after.ms - covered(after.charges);
    const dup = await podDuplicates("gpu-a");
    const intervals = atSilence.charges.filter((c) => c.end - c.start === USAGE_MS).length;
    return (
      `gpu-a silent ${((back - t0) / 1000).toFixed(1)} s (operator SIGSTOPped until its session was Unknown and ${SILENT_S} s had passed): session Unknown after ${(unknownAfter / 1000).toFixed(1)} s; ` +
      `charged_at_silence=${secs(atSilence.ms)} (${intervals} closed ${USAGE_MS / 1000} s intervals, the last ended ${secs(t0 - atSilence.until)} before) ` +
      `charged_at_silence_end=${secs(atItsEnd.ms)} (charged past the silence's start while silent: ${secs(covered(atItsEnd.charges, t0))}); ` +
      `Running again ${((reconciled - back) / 1000).toFixed(1)} s after it returned (started_at kept: ${resumed.started_at !== null}); ` +
      `then charged=${secs(after.ms)} for the pod's ${secs(ran)} up to its last charged interval ` +
      `(of the silence, billed from the operator's late samples: ${secs(covered(after.charges, t0, back))}) ` +
      `gap_not_charged=${secs(gap)} double_charged=${secs(twice)}; ` +
      verdict(Math.round(gap / 1000), dup + Math.round(twice / 1000), "s of the pod's run not charged")
    );
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
      f.killApi();
    })();
    let next = 0;
    const workers = Array.from({ length: 20 }, async () => {
      for (let i = next++; i < BURST; i = next++) {
        const name = names[i] as string;
        const u = users[i % users.length] ?? b.alice;
        try {
          const r = await call(u, "createSession", { body: { ...l4, name } }, { idempotencyKey: name });
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
    await f.restartApi();
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
      if (r.status !== 201) retriedOther.push(causeOf(r));
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
    const halfIds: string[] = [];
    const tokenOf = new Map(users.map((u) => [u.id, u.token]));
    for (const row of made) {
      const token = tokenOf.get(row.owner_id) ?? b.superAdmin.token;
      const r = await call({ token }, "getSessionResource", { params: { sessionId: row.id } });
      if (r.status === 404) halfIds.push(row.id);
    }
    // The worker's sweep ends such rows (Failed) once they are older than any create takes (2 minutes).
    let half = `${halfIds.length}`;
    if (halfIds.length > 0) {
      const sweepStart = Date.now();
      for (;;) {
        const left = await db("sessions").whereIn("id", halfIds).whereNot({ phase: "Failed" }).count({ n: "*" });
        if (Number(left[0]?.n ?? 0) === 0) {
          half += ` (all ended Failed by the worker's sweep ${((Date.now() - killedAt) / 1000).toFixed(0)} s after the kill)`;
          break;
        }
        if (Date.now() - sweepStart > 300_000) {
          half += ` (${left[0]?.n} still live after 5 min)`;
          break;
        }
        await sleep(2_000);
      }
    }
    const refusedFirst = [...first.values()].filter((x) => x !== 201 && x !== 0 && x !== 503).length;
    return `API SIGKILLed after ${BURST - unanswered.length - refusedFirst}/${BURST} creates accepted (${((killedAt - burstStart) / 1000).toFixed(1)} s into the burst): back in ${((back - t0) / 1000).toFixed(1)} s; ${unanswered.length} unanswered retried with their keys (${[...retried.values()].filter((x) => x === 201).length} → 201${retriedOther.length ? `, the others: ${[...new Set(retriedOther)].join(", ")}` : ""}); ${accepted.length} accepted, ${made.length} sessions exist, ${refusedFirst} refused (quota/policy), half-made ${half}; ${verdict(lost, dup)}`;
  });
} finally {
  await fb?.stop();
}
