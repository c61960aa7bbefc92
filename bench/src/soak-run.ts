// biome-ignore-all lint/suspicious/noExplicitAny: the soak reads Kubernetes objects and database rows as they come
// The soak (issue 36): hours of a realistic load on real processes while faults come every few minutes,
// with a reconciliation every few minutes and at the end. soak.ts is its command line, soak.test.ts its
// CI-sized run; docs/dev/soak.md says what is measured and why.
//
// The bed is the fault report's (fault-bed.ts): mgmt, gpu-a (H100s; its operator a process) and gpu-b
// (L4s; its operator in this process), the API and two workers (a leader and a standby) as processes, a
// real Postgres behind a relay. On it:
//   users     `users` members of one organization; each, every few seconds (think time), reads its session
//             and acts on it: creates one (an Idempotency-Key per create, retried with it until answered),
//             pauses, resumes, terminates; reads lists. At most one live session per user.
//   streams   `streams` GET /sessions/events streams, reopened with Last-Event-ID after a drop.
//   usage     gpu-a's operator cuts usage every `usageIntervalS`; billing charges it.
//   webhooks  one endpoint of the organization on a local HTTPS receiver (its own CA, admitted by
//             BERTH_WEBHOOK_ALLOW_HOSTS and BERTH_WEBHOOK_CA_FILE as a deployment sets them).
//   probe     a light request (a member's first page of sessions) twice a second, for its p99.
// Faults, in turn, one every `faultEveryMin`: fault-bed.ts's injectors.
// A checkpoint stops the users' actions (streams, usage and webhooks go on), lets what is in flight settle
// (with a deadline), and reconciles: see Checkpoint.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { startReceiver } from "@berth/api/testing";
import { type MeteredPodView, podRun } from "@berth/controllers";
import { LABELS } from "@berth/crds";
import { adminKube, H100, L4, MANAGEMENT, SESSIONS_NS } from "@berth/e2e/sessions";
import { answering, causeOf } from "./api.ts";
import { covered, type FaultBed, sleep, startFaultBed } from "./fault-bed.ts";
import { leadershipLines } from "./soak-leadership.ts";
import type { Child } from "./split-processes.ts";

export const FAULTS = [
  "pg-stop",
  "api-burst",
  "worker-leader",
  "gpu-apiserver",
  "operator",
  "silent",
  "pg-hang",
  "mgmt-apiserver",
] as const;
export type FaultName = (typeof FAULTS)[number];

export interface SoakOptions {
  minutes: number;
  checkEveryMin: number;
  faultEveryMin: number;
  /** Memory growth is measured from the first checkpoint at or after this many minutes. */
  warmupMin: number;
  users: number;
  streams: number;
  usageIntervalS: number;
  /** Mean seconds between one user's actions. */
  thinkS: number;
  faults: readonly FaultName[];
  burst: number;
  /** How long a checkpoint waits for sessions, deliveries and samples to settle. */
  settleS: number;
  out(line: string): void;
}

export interface ProcessSample {
  name: string;
  pid: number;
  rssMb: number;
  fds: number;
}

export interface Reconciliation {
  sessions: number;
  live: number;
  /** Accepted creates whose session does not exist. */
  lost: number;
  /** Sessions in a passing phase past the settle deadline, or whose pod disagrees with their phase. */
  stuck: string[];
  /** A second session for one create, or a second pod for one session. */
  duplicated: number;
  /** Wallets whose cached balance is not the sum of their ledger entries, and transactions that do not sum to 0. */
  walletsOff: number;
  wallets: number;
  txnsUnbalanced: number;
  /** Seconds of a running pod's time not charged, and seconds charged twice; samples left unbilled. */
  usageLostS: number;
  usageTwiceS: number;
  unbilledSamples: number;
  chargedS: number;
  /**
   * Deliveries settled succeeded that the receiver never got, or failed; still pending (a retry's backoff);
   * received twice (at least once: a receiver dedupes by webhook-id).
   */
  webhooksLost: number;
  webhooksPending: number;
  webhooksDuplicated: number;
  webhooksDelivered: number;
}

export interface Checkpoint {
  atMin: number;
  settleS: number;
  processes: ProcessSample[];
  pgSizeMb: number;
  queued: number;
  pendingDeliveries: number;
  unbilled: number;
  actions: number;
  errors: number;
  streamsOpen: number;
  streamEvents: number;
  /** p99 of the light request in this window, outside fault windows (ms); NaN without samples. */
  p99: number;
  probes: number;
  rec: Reconciliation;
}

export interface FaultRecord {
  name: FaultName;
  atMin: number;
  seconds: number;
  note: string;
  start: number;
  end: number;
}

export interface SoakReport {
  quietP99: number;
  checkpoints: Checkpoint[];
  faults: FaultRecord[];
  /** Per process: RSS growth from the warm-up checkpoint (or its first after it, if restarted) to the last. */
  growth: { name: string; pid: number; fromMb: number; toMb: number; pct: number }[];
  final: Reconciliation;
}

const PASSING = new Set([
  "Pending",
  "Starting",
  "Pausing",
  "Resuming",
  "Restarting",
  "Terminating",
  "Unknown",
  "Queued",
]);
const ENDED = new Set(["Terminated", "Failed"]);
/** A holder of a token, as the API's caller takes one. */
type Who = { token: string };
/** A request that got no answer (the API down for a moment), counted as status 0. */
const noAnswer = { ok: false, status: 0, code: "no_answer", message: "no answer" } as const;

const p99Of = (xs: number[]) => {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(s.length * 0.99) - 1)] as number;
};
const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);

function sampleProcess(name: string, pid: number): ProcessSample | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const rss = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
    return { name, pid, rssMb: Math.round(Number(rss ?? 0) / 1024), fds: readdirSync(`/proc/${pid}/fd`).length };
  } catch {
    return undefined;
  }
}
const commOf = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "?";
  }
};

export async function runSoak(o: SoakOptions): Promise<SoakReport> {
  const out = o.out;
  const dir = mkdtempSync(join(tmpdir(), "berth-soak-"));
  // Kept after the run (not under `dir`): a soak that ends with stuck sessions is read from them.
  const logDir = mkdtempSync(join(tmpdir(), "berth-soak-logs-"));
  out(`# the processes' output is kept in ${logDir}`);
  const receiver = await startReceiver();
  const caFile = join(dir, "receiver-ca.pem");
  writeFileSync(caFile, receiver.ca);
  // webhook-id → times received; the receiver's own list is emptied as it goes (hours of bodies).
  const received = new Map<string, number>();
  receiver.answer = (got) => {
    received.set(got.id, (received.get(got.id) ?? 0) + 1);
    return { status: 204 };
  };
  const drain = setInterval(() => {
    receiver.received.length = 0;
  }, 1000);
  const allow = { BERTH_WEBHOOK_ALLOW_HOSTS: "127.0.0.1" };
  const h100Nodes = Math.max(4, Math.ceil((o.users + o.burst) / 8) + 2);
  const l4Nodes = Math.max(2, Math.ceil(o.users / 10));
  let fb: FaultBed | undefined;
  const stops: (() => Promise<void>)[] = [];
  try {
    fb = await startFaultBed({
      fleet: {
        clusters: [
          MANAGEMENT,
          {
            name: "gpu-a",
            kind: "gpu",
            nodes: Array.from({ length: h100Nodes }, (_, i) => ({
              name: `gpu-a-${i + 1}`,
              gpuModel: H100,
              gpuCount: 8,
            })),
            gpuRuntimeClass: true,
            gpuDevicePlugin: true,
          },
          {
            name: "gpu-b",
            kind: "gpu",
            nodes: Array.from({ length: l4Nodes }, (_, i) => ({ name: `gpu-b-${i + 1}`, gpuModel: L4, gpuCount: 2 })),
            gpuRuntimeClass: true,
            gpuDevicePlugin: true,
          },
        ],
      },
      gpuCluster: "gpu-a",
      usageIntervalMs: o.usageIntervalS * 1000,
      env: { api: allow, worker: { ...allow, BERTH_WEBHOOK_CA_FILE: caFile } },
      bed: { operatorUsageIntervalMs: o.usageIntervalS * 1000 },
      logDir,
    });
    const f = fb;
    const b = f.bed;
    const s = f.split;
    const db = b.t.database.db;
    const call = answering(() => s.apiUrl, 60_000);

    // Workers: the split's leader and a standby; each kill of the leader is replaced by a new standby.
    const workers: Child[] = [s.worker as Child];
    let workerN = 1;
    const addStandby = async () => {
      workerN++;
      workers.push(await s.startWorker(`worker-split-${workerN}`));
    };
    await addStandby();

    // Users: hundreds of members of the bed's organization, with day-long tokens for the API's clock.
    const users: { id: string; token: string }[] = [];
    for (let i = 0; i < o.users; i++) {
      const u = await b.t.aUser();
      await b.t.member(u, b.org.id, null, "member");
      users.push({ id: u.id, token: u.token });
    }
    await s.reissueTokens([b.superAdmin, b.orgAdmin, b.alice, b.bob, ...users]);
    // No per-user limits: the soak counts lost and duplicated sessions, not the policy's refusals.
    const policy = await call(b.superAdmin, "updateResourcePolicy", {
      params: { name: "global" },
      body: { limits: {} },
    });
    if (policy.status !== 200) throw new Error(`the global policy: ${policy.status} ${JSON.stringify(policy)}`);
    const hook = await call(b.orgAdmin, "createWebhook", {
      body: { organization_id: b.org.id, url: receiver.url, description: "soak receiver" },
    });
    if (!hook.ok || hook.status !== 201) throw new Error(`the webhook: ${hook.status} ${JSON.stringify(hook)}`);
    const endpointId = hook.body.id;

    // Every accepted create: its key (the session's display name) and id.
    const accepted = new Map<string, string>();
    let actions = 0;
    let errors = 0;
    // Errors by what they were (status and code, "no answer" for none): load and a defect look different.
    const errorsBy = new Map<string, number>();
    const failed = (what: string) => {
      errors++;
      errorsBy.set(what, (errorsBy.get(what) ?? 0) + 1);
    };
    let holding = false;
    let inflight = 0;
    let running = true;
    const h100 = { offering: "h100", preset: "gpu-small", image: "terminal" };
    const l4 = { offering: "l4", preset: "gpu-small", image: "terminal" };
    const act = async (fn: () => Promise<void>) => {
      while (holding && running) await sleep(250);
      if (!running) return;
      inflight++;
      try {
        await fn();
      } catch {
        failed("no answer"); // the API down for a moment: the next turn tries again
      } finally {
        inflight--;
      }
    };

    // The light request, twice a second: quiet first (no load yet), then throughout.
    const probes: { at: number; ms: number; status: number }[] = [];
    let probing = true;
    const prober = (async () => {
      while (probing) {
        const at = Date.now();
        await call(b.alice, "listSessions", { query: { size: 5 } }).then(
          (r) => void probes.push({ at, ms: Date.now() - at, status: r.status }),
          () => void probes.push({ at, ms: Date.now() - at, status: 0 }),
        );
        await sleep(Math.max(0, 500 - (Date.now() - at)));
      }
    })();
    stops.push(async () => {
      probing = false;
      await prober;
    });
    await sleep(30_000);
    const quietP99 = p99Of(probes.filter((p) => p.status === 200).map((p) => p.ms));
    out(
      `# soak: ${o.minutes} min, ${o.users} users (think ${o.thinkS} s), ${o.streams} streams, usage every ${o.usageIntervalS} s, a fault every ${o.faultEveryMin} min, a checkpoint every ${o.checkEveryMin} min (warm-up ${o.warmupMin} min); gpu-a ${h100Nodes}×8 H100, gpu-b ${l4Nodes}×2 L4; ${cpus().length} CPUs, load ${loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")}`,
    );
    out(`# quiet p99 of the light request (GET /sessions?size=5, 30 s, no load): ${quietP99} ms`);

    // Streams, reopened after a drop with the last id seen.
    let streamEvents = 0;
    let streamsOpen = 0;
    const streamLoops = Array.from({ length: o.streams }, async (_, i) => {
      const u = i === 0 ? b.orgAdmin : (users[i % users.length] as { token: string });
      let last: string | undefined;
      while (running) {
        const ac = new AbortController();
        const stop = () => ac.abort();
        const watch = setInterval(() => {
          if (!running) stop();
        }, 500);
        try {
          const res = await fetch(`${s.apiUrl}/api/v1/sessions/events`, {
            headers: { authorization: `Bearer ${u.token}`, ...(last ? { "last-event-id": last } : {}) },
            signal: ac.signal,
          });
          if (res.status === 200 && res.body) {
            streamsOpen++;
            try {
              const dec = new TextDecoder();
              let buf = "";
              for await (const chunk of res.body) {
                buf += dec.decode(chunk as Uint8Array, { stream: true });
                for (let k = buf.indexOf("\n\n"); k >= 0; k = buf.indexOf("\n\n")) {
                  const block = buf.slice(0, k);
                  buf = buf.slice(k + 2);
                  const id = /^id: (.*)$/m.exec(block)?.[1];
                  if (id) last = id;
                  if (/^data: /m.test(block)) streamEvents++;
                }
              }
            } finally {
              streamsOpen--;
            }
          } else await res.body?.cancel();
        } catch {
          // dropped (the API killed): reopen
        } finally {
          clearInterval(watch);
        }
        if (running) await sleep(1000);
      }
    });

    // Users' loops.
    let keyN = 0;
    const userLoops = users.map(async (u, i) => {
      let mine: string | undefined; // the live session
      let pendingKey: string | undefined; // a create not yet answered: retried with its key
      const body = i % 10 === 9 ? l4 : h100;
      await sleep(Math.random() * o.thinkS * 1000);
      while (running) {
        await act(async () => {
          actions++;
          if (!mine) {
            const key = pendingKey ?? `soak-${i}-${keyN++}`;
            pendingKey = key;
            const r = await call(u, "createSession", { body: { ...body, name: key } }, { idempotencyKey: key });
            if (r.ok && r.status === 201) {
              accepted.set(key, r.body.id);
              mine = r.body.id;
              pendingKey = undefined;
            } else if (r.status < 500 && r.status !== 409) {
              failed(`create ${causeOf(r)}`);
              pendingKey = undefined; // refused: a new create next time
            } else failed(`create ${causeOf(r)}`);
            return;
          }
          const sessionId = mine;
          const d = await call(u, "getSession", { params: { sessionId } });
          if (!d.ok || d.status !== 200) {
            failed(`read ${causeOf(d)}`);
            return;
          }
          const phase = d.body.phase;
          const dice = Math.random();
          if (ENDED.has(phase)) mine = undefined;
          else if (phase === "Running") {
            if (dice < 0.4) await call(u, "pauseSession", { params: { sessionId } });
            else if (dice < 0.6) await call(u, "terminateSession", { params: { sessionId } });
            else await call(u, "listSessions", { query: { size: 20 } });
          } else if (phase === "Paused") {
            if (dice < 0.7) await call(u, "resumeSession", { params: { sessionId } });
            else await call(u, "terminateSession", { params: { sessionId } });
          }
        });
        await sleep(o.thinkS * 1000 * (0.5 + Math.random()));
      }
    });

    // Sessions a fault made in bulk (the API burst): terminated once they can be.
    const toEnd = new Map<string, Who>(); // id -> owner
    const toRetry = new Map<string, Who>(); // key -> owner: creates the API burst left unanswered
    const janitor = (async () => {
      while (running) {
        for (const [n, who] of toRetry) {
          const r = await call(who, "createSession", { body: { ...h100, name: n } }, { idempotencyKey: n }).catch(
            () => noAnswer,
          );
          if (r.ok && r.status === 201) {
            accepted.set(n, r.body.id);
            toEnd.set(r.body.id, who);
            toRetry.delete(n);
          } else if (r.status > 0 && r.status < 500 && r.status !== 409) toRetry.delete(n);
        }
        for (const [sessionId, who] of toEnd) {
          const r = await call(who, "terminateSession", { params: { sessionId } }).catch(() => noAnswer);
          if (r.status === 202 || r.status === 404) toEnd.delete(sessionId);
          else if (r.status === 409) {
            const d = await call(who, "getSession", { params: { sessionId } }).catch(() => noAnswer);
            if (d.ok && d.status === 200 && ENDED.has(d.body.phase)) toEnd.delete(sessionId);
          }
        }
        await sleep(5000);
      }
    })();
    stops.push(async () => {
      running = false;
      await Promise.allSettled([...userLoops, ...streamLoops, janitor]);
    });

    // ── Faults ────────────────────────────────────────────────────────────────────────────────────────
    const leader = async () => {
      for (const w of workers) {
        if (w.proc.exitCode !== null || w.proc.signalCode !== null) continue;
        if (
          await w.line("session controller started", 1).then(
            () => true,
            () => false,
          )
        )
          return w;
      }
      return undefined;
    };
    // A start that does not finish in time is killed and tried again: the soak must not go on without an API.
    const restartApi = async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await f.restartApi();
        } catch (err) {
          s.api.proc.kill("SIGKILL");
          out(`  the API did not start again (attempt ${attempt}): ${(err as Error).message.split("\n")[0]}`);
          if (attempt === 3) throw err;
        }
      }
    };
    const inject = async (name: FaultName): Promise<string> => {
      switch (name) {
        case "pg-stop": {
          await f.stopPostgres();
          await sleep(5000);
          return `down 5 s, restart ${((await f.startPostgresAgain()) / 1000).toFixed(1)} s`;
        }
        case "pg-hang": {
          f.hangPostgres();
          await sleep(40_000);
          f.healPostgres();
          return "a partition of 40 s";
        }
        case "mgmt-apiserver":
        case "gpu-apiserver": {
          const c = name === "mgmt-apiserver" ? "mgmt" : "gpu-a";
          const t0 = Date.now();
          await f.restartApiserver(c);
          return `${c} down and back in ${((Date.now() - t0) / 1000).toFixed(1)} s`;
        }
        case "worker-leader": {
          const w = await leader();
          if (!w) return "no leader found: skipped";
          const standby = workers.filter((x) => x !== w && x.proc.exitCode === null && x.proc.signalCode === null);
          const t0 = Date.now();
          w.proc.kill("SIGKILL");
          workers.splice(workers.indexOf(w), 1);
          await Promise.any(standby.map((x) => x.line("session controller started", 120_000)));
          const led = Date.now();
          await addStandby();
          return `${w.name} SIGKILLed, the standby led ${((led - t0) / 1000).toFixed(1)} s later; a new standby started`;
        }
        case "operator": {
          const t0 = Date.now();
          f.killOperator();
          await sleep(2000);
          await f.restartOperator();
          return `gpu-a operator SIGKILLed, back ${((Date.now() - t0) / 1000).toFixed(1)} s later`;
        }
        case "silent": {
          const wake = f.silenceOperator();
          try {
            await sleep(60_000);
          } finally {
            wake();
          }
          return "gpu-a operator SIGSTOPped 60 s";
        }
        case "api-burst": {
          const owners = [b.alice, b.bob, b.orgAdmin];
          const names = Array.from({ length: o.burst }, () => `burst-${keyN++}`);
          const first = new Map<string, { status: number; id?: string; what: string }>();
          let answered = 0;
          let next = 0;
          const kill = (async () => {
            while (answered < o.burst / 3) await sleep(20);
            f.killApi();
          })();
          await Promise.all(
            Array.from({ length: 10 }, async () => {
              for (let k = next++; k < o.burst; k = next++) {
                const n = names[k] as string;
                const u = owners[k % owners.length] as { token: string };
                const r = await call(u, "createSession", { body: { ...h100, name: n } }, { idempotencyKey: n }).catch(
                  () => noAnswer,
                );
                first.set(n, {
                  status: r.status,
                  id: r.ok ? r.body.id : undefined,
                  what: r.status === 0 ? "no answer" : causeOf(r),
                });
                answered++;
              }
            }),
          );
          await kill;
          const t0 = Date.now();
          await restartApi();
          const back = Date.now() - t0;
          // Unanswered creates are retried with their keys in the background, as clients would: a key a
          // killed replica left in flight answers 409 until it is taken over (docs/dev/testing.md).
          let unanswered = 0;
          for (const [k, n] of names.entries()) {
            const u = owners[k % owners.length] as { token: string };
            const got = first.get(n) as { status: number; id?: string; what: string };
            if (got.status === 201 && got.id) {
              accepted.set(n, got.id);
              toEnd.set(got.id, u);
            } else if (got.status === 0 || got.status >= 500 || got.status === 409) {
              unanswered++;
              toRetry.set(n, u);
            }
          }
          const ok = names.filter((n) => accepted.has(n)).length;
          const answers = new Map<string, number>();
          for (const a of first.values()) answers.set(a.what, (answers.get(a.what) ?? 0) + 1);
          const by = [...answers].map(([k, n]) => `${k} ×${n}`).join(", ");
          return `API SIGKILLed a third into a burst of ${o.burst} creates, back in ${(back / 1000).toFixed(1)} s; ${ok}/${o.burst} accepted at once (first answers: ${by}), ${unanswered} unanswered (retried with their keys until answered)`;
        }
      }
    };

    // ── Checkpoints ───────────────────────────────────────────────────────────────────────────────────
    const clusterOf = new Map(Object.values(b.gpu).map((g) => [g.id, g.name]));
    const reconcile = async (settleDeadline: number): Promise<{ rec: Reconciliation; settledS: number }> => {
      const t0 = Date.now();
      // Settle: no session passing between phases, no delivery pending, no sample older than two intervals
      // unbilled; or the deadline.
      for (;;) {
        const [passing] = (await db("sessions")
          .whereIn("phase", [...PASSING])
          .count({ n: "*" })) as { n: string }[];
        const [pending] = (await db("webhook_deliveries").where({ state: "pending" }).count({ n: "*" })) as {
          n: string;
        }[];
        const [old] = (await db("usage_samples")
          .whereNull("billed_at")
          .where("received_at", "<", new Date(Date.now() - 2 * o.usageIntervalS * 1000))
          .count({ n: "*" })) as { n: string }[];
        if (Number(passing?.n) + Number(pending?.n) + Number(old?.n) === 0 && toEnd.size === 0 && toRetry.size === 0)
          break;
        if (Date.now() > settleDeadline) break;
        await sleep(2000);
      }
      const settledS = Math.round((Date.now() - t0) / 1000);
      const rows = (await db("sessions").select("id", "display_name", "phase", "reason", "cluster_id")) as {
        id: string;
        display_name: string;
        phase: string;
        reason: string | null;
        cluster_id: string | null;
      }[];
      // A create answered 503 whose resource was never written is kept as Failed (CreateFailed) and its
      // retry makes the session: a record of the attempt, not a second session.
      const byName = new Map<string, string[]>();
      for (const r of rows)
        if (r.reason !== "CreateFailed") byName.set(r.display_name, [...(byName.get(r.display_name) ?? []), r.id]);
      const ids = new Set(rows.map((r) => r.id));
      const lost = [...accepted.values()].filter((id) => !ids.has(id)).length;
      const madeTwice = [...byName.entries()].filter(([, xs]) => xs.length > 1);
      let duplicated = madeTwice.reduce((a, [, xs]) => a + xs.length - 1, 0);
      for (const [name, xs] of madeTwice.slice(0, 5))
        out(`  one create, ${xs.length} sessions: ${name} → ${xs.join(", ")}`);
      // Pods, each cluster's, raw (their runs meter usage).
      const pods: { cluster: string; pod: MeteredPodView & { metadata: { deletionTimestamp?: string } } }[] = [];
      for (const name of Object.keys(b.gpu)) {
        const k = adminKube(b.fleet.cluster(name));
        try {
          const list = await k.json<{ items: any[] }>("GET", `/api/v1/namespaces/${SESSIONS_NS}/pods`);
          for (const p of list.items) pods.push({ cluster: name, pod: p });
        } finally {
          k.close();
        }
      }
      const podsOf = new Map<string, typeof pods>();
      for (const p of pods) {
        const sid = p.pod.metadata.labels?.[LABELS.sessionId] ?? p.pod.metadata.name ?? "";
        podsOf.set(sid, [...(podsOf.get(sid) ?? []), p]);
      }
      const stuck: string[] = [];
      for (const r of rows) {
        const mine = (podsOf.get(r.id) ?? []).filter((p) => !p.pod.metadata.deletionTimestamp);
        if (mine.length > 1) duplicated += mine.length - 1;
        if (PASSING.has(r.phase)) stuck.push(`${r.id} ${r.phase}`);
        else if (r.phase === "Running") {
          const where = r.cluster_id ? clusterOf.get(r.cluster_id) : undefined;
          if (mine.length === 0 || mine.some((p) => p.cluster !== where)) stuck.push(`${r.id} Running without its pod`);
        } else if (mine.length > 0) stuck.push(`${r.id} ${r.phase} with a pod`);
      }
      for (const sid of podsOf.keys())
        if (!ids.has(sid) && (podsOf.get(sid) ?? []).some((p) => !p.pod.metadata.deletionTimestamp))
          stuck.push(`pod of ${sid}: no session`);
      // What an on-call engineer would look at first, for the first few: the row, its operator's last
      // report, and its pods.
      for (const [i, line] of stuck.slice(0, 5).entries()) {
        const id = line.split(" ")[0] as string;
        const row = (await db("sessions")
          .where({ id })
          .first("desired_state", "reason", "message", "mirror_revision", "updated_at")) as any;
        const rep = (await db("session_status_reports")
          .where({ session: id })
          .orderBy("at", "desc")
          .first("phase", "reason", "observed_generation", "at", "received_at")) as any;
        const ps = (podsOf.get(id) ?? []).map(
          (p) =>
            `${p.cluster}:${(p.pod as any).status?.phase ?? "?"}${p.pod.metadata.deletionTimestamp ? " (deleting)" : ""}`,
        );
        const ago = (d: Date | undefined) =>
          d ? `${Math.round((Date.now() - new Date(d).getTime()) / 1000)} s ago` : "never";
        stuck[i] =
          `${line} [intent ${row?.desired_state ?? "?"}, ${row?.reason ?? ""}: ${row?.message ?? ""}; revision ${row?.mirror_revision ?? "?"}, updated ${ago(row?.updated_at)}; ` +
          `last report ${rep ? `${rep.phase} ${rep.reason ?? ""} rev ${rep.observed_generation} at ${ago(rep.at)}, received ${ago(rep.received_at)}` : "none"}; pods ${ps.join(", ") || "none"}]`;
      }
      // Wallets against their ledger; every transaction balanced.
      const { rows: walletRows } = (await db.raw(
        `SELECT w.id, w.balance, coalesce(sum(e.amount), 0) AS sum FROM wallets w
           LEFT JOIN ledger_entries e ON e.wallet_id = w.id GROUP BY w.id, w.balance`,
      )) as { rows: { id: string; balance: string | null; sum: string }[] };
      const walletsOff = walletRows.filter((w) => w.balance !== null && BigInt(w.balance) !== BigInt(w.sum)).length;
      const { rows: unbalanced } = (await db.raw(
        "SELECT txn_seq FROM ledger_entries GROUP BY txn_seq HAVING sum(amount) <> 0",
      )) as { rows: unknown[] };
      // Usage: per session, charged milliseconds against the time its charges cover (twice), and each
      // running pod's run up to its last charged moment against what is charged of it (lost).
      const { rows: charges } = (await db.raw(
        `SELECT t.session_id, u.period_start, u.period_end, t.metadata->>'ms' AS ms FROM ledger_transactions t
           JOIN usage_samples u ON u.cluster_id = t.cluster_id AND u.sample_id = t.sample_id WHERE t.kind = 'charge'`,
      )) as { rows: { session_id: string; period_start: Date; period_end: Date; ms: string | null }[] };
      const bySession = new Map<string, { start: number; end: number; ms: number }[]>();
      for (const c of charges) {
        const x = {
          start: new Date(c.period_start).getTime(),
          end: new Date(c.period_end).getTime(),
          ms: Number(c.ms ?? 0),
        };
        bySession.set(c.session_id, [...(bySession.get(c.session_id) ?? []), x]);
      }
      let twice = 0;
      let charged = 0;
      for (const cs of bySession.values()) {
        const ms = cs.reduce((a, c) => a + c.ms, 0);
        charged += ms;
        twice += Math.max(0, ms - covered(cs));
      }
      let lostMs = 0;
      for (const r of rows.filter((x) => x.phase === "Running")) {
        const cs = bySession.get(r.id) ?? [];
        const until = cs.reduce((a, c) => Math.max(a, c.end), 0);
        for (const p of podsOf.get(r.id) ?? []) {
          const run = podRun(p.pod, LABELS.sessionId);
          if (run?.startMs === undefined || until <= run.startMs) continue;
          lostMs += until - run.startMs - covered(cs, run.startMs, until);
        }
      }
      const [unbilled] = (await db("usage_samples").whereNull("billed_at").count({ n: "*" })) as { n: string }[];
      // Webhooks: the outbox against the receiver.
      const deliveries = (await db("webhook_deliveries")
        .where({ endpoint_id: endpointId })
        .select("event_id", "state")) as {
        event_id: string;
        state: string;
      }[];
      // Pending is not lost: a delivery a fault failed waits out its backoff (docs/dev/webhooks.md).
      const webhooksLost = deliveries.filter(
        (d) => d.state === "failed" || (d.state === "succeeded" && !received.has(d.event_id)),
      ).length;
      const webhooksPending = deliveries.filter((d) => d.state === "pending").length;
      const webhooksDuplicated = [...received.values()].reduce((a, c) => a + Math.max(0, c - 1), 0);
      return {
        settledS,
        rec: {
          sessions: rows.length,
          live: rows.filter((r) => !ENDED.has(r.phase)).length,
          lost,
          stuck,
          duplicated,
          walletsOff,
          wallets: walletRows.length,
          txnsUnbalanced: unbalanced.length,
          usageLostS: Math.round(lostMs / 1000),
          usageTwiceS: Math.round(twice / 1000),
          unbilledSamples: Number(unbilled?.n ?? 0),
          chargedS: Math.round(charged / 1000),
          webhooksLost,
          webhooksPending,
          webhooksDuplicated,
          webhooksDelivered: deliveries.filter((d) => d.state === "succeeded").length,
        },
      };
    };

    // A worker is named with its role: a standby that takes the lease starts its leader's working set
    // (every session listed), so its growth is measured from its first checkpoint as the leader.
    const processes = (lead: Child | undefined): ProcessSample[] => {
      const role = (w: Child) => (w === lead ? "leader" : "standby");
      const xs: (ProcessSample | undefined)[] = [
        sampleProcess("api", s.api.pid),
        ...workers.map((w) => sampleProcess(`${w.name.replace("worker worker-split-", "worker-")} ${role(w)}`, w.pid)),
        sampleProcess("operator gpu-a", s.operator.pid),
        sampleProcess("postgres", f.pg.pid),
        sampleProcess("bench (gpu-b operator)", process.pid),
      ];
      for (const c of b.fleet.clusters)
        for (const pid of c.pids()) xs.push(sampleProcess(`${c.name} ${commOf(pid)}`, pid));
      return xs.filter((x): x is ProcessSample => x !== undefined);
    };

    const start = Date.now();
    const faults: FaultRecord[] = [];
    const checkpoints: Checkpoint[] = [];
    let windowFrom = start;
    const atMin = () => (Date.now() - start) / 60_000;
    const outsideFaults = (at: number) => !faults.some((x) => at >= x.start && at <= x.end + 60_000);
    out(
      "| t (min) | settle s | sessions (live) | actions | errors | streams (events) | api MB/fds | workers MB | operator MB/fds | postgres MB | pg size MB | queued | deliveries pending | unbilled | p99 ms | lost | stuck | dup | wallets off | usage lost/twice s | webhooks lost/dup |",
    );
    out("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    const checkpoint = async () => {
      holding = true;
      for (const t0 = Date.now(); inflight > 0 && Date.now() - t0 < 120_000; ) await sleep(200);
      // The bench's own reads may meet Postgres slow or a pool timeout on a loaded machine: tried again.
      const read = async () => {
        const { rec, settledS } = await reconcile(Date.now() + o.settleS * 1000);
        const [{ size } = { size: "0" }] = (await db.raw("SELECT pg_database_size(current_database()) AS size")).rows;
        const [q] = (await db("sessions").where({ phase: "Queued" }).count({ n: "*" })) as { n: string }[];
        const [pd] = (await db("webhook_deliveries").where({ state: "pending" }).count({ n: "*" })) as { n: string }[];
        return { rec, settledS, size, q, pd };
      };
      let got: Awaited<ReturnType<typeof read>> | undefined;
      for (let attempt = 1; !got; attempt++) {
        try {
          got = await read();
        } catch (err) {
          out(`  checkpoint read failed (attempt ${attempt}): ${(err as Error).message.split("\n")[0]}`);
          if (attempt === 5) throw err;
          await sleep(10_000);
        }
      }
      const { rec, settledS, size, q, pd } = got;
      const ps = processes(await leader());
      const now = Date.now();
      const window = probes.filter((p) => p.at >= windowFrom && p.status === 200 && outsideFaults(p.at));
      windowFrom = now;
      const c: Checkpoint = {
        atMin: atMin(),
        settleS: settledS,
        processes: ps,
        pgSizeMb: mb(Number(size)),
        queued: Number(q?.n ?? 0),
        pendingDeliveries: Number(pd?.n ?? 0),
        unbilled: rec.unbilledSamples,
        actions,
        errors,
        streamsOpen,
        streamEvents,
        p99: p99Of(window.map((p) => p.ms)),
        probes: window.length,
        rec,
      };
      checkpoints.push(c);
      // Probes are kept for one window only.
      probes.splice(0, probes.findIndex((p) => p.at >= now) < 0 ? probes.length : probes.findIndex((p) => p.at >= now));
      const p = (n: string) => ps.filter((x) => x.name.startsWith(n));
      const api = p("api")[0];
      const op = p("operator")[0];
      out(
        `| ${c.atMin.toFixed(1)} | ${settledS} | ${rec.sessions} (${rec.live}) | ${actions} | ${errors} | ${streamsOpen} (${streamEvents}) | ${api?.rssMb}/${api?.fds} | ${p(
          "worker",
        )
          .map((w) => w.rssMb)
          .join(
            ", ",
          )} | ${op?.rssMb}/${op?.fds} | ${p("postgres")[0]?.rssMb} | ${c.pgSizeMb} | ${c.queued} | ${c.pendingDeliveries} | ${c.unbilled} | ${c.p99} (${window.length}) | ${rec.lost} | ${rec.stuck.length} | ${rec.duplicated} | ${rec.walletsOff}/${rec.wallets} (${rec.txnsUnbalanced} txns) | ${rec.usageLostS}/${rec.usageTwiceS} | ${rec.webhooksLost}/${rec.webhooksDuplicated} of ${rec.webhooksDelivered} (${rec.webhooksPending} pending) |`,
      );
      out(
        `  processes: ${ps.map((x) => `${x.name} ${x.rssMb} MB ${x.fds} fds`).join("; ")}; machine load ${loadavg()
          .map((l) => l.toFixed(1))
          .join(" ")}`,
      );
      if (errorsBy.size > 0)
        out(
          `  errors by cause: ${[...errorsBy]
            .sort((x, y) => y[1] - x[1])
            .map(([k, n]) => `${k} ×${n}`)
            .join(", ")}`,
        );
      if (rec.stuck.length > 0) out(`  stuck: ${rec.stuck.slice(0, 20).join("; ")}`);
      holding = false;
    };

    const end = start + o.minutes * 60_000;
    let nextCheck = start + o.checkEveryMin * 60_000;
    let nextFault = start + o.faultEveryMin * 60_000;
    let k = 0;
    while (Date.now() < end) {
      if (Date.now() >= nextCheck) {
        await checkpoint();
        nextCheck += o.checkEveryMin * 60_000;
      } else if (Date.now() >= nextFault && o.faults.length > 0) {
        const name = o.faults[k++ % o.faults.length] as FaultName;
        const t0 = Date.now();
        let note: string;
        try {
          note = await inject(name);
        } catch (err) {
          note = `FAILED: ${(err as Error).message.split("\n")[0]}`;
        }
        const rec: FaultRecord = {
          name,
          atMin: (t0 - start) / 60_000,
          seconds: (Date.now() - t0) / 1000,
          note,
          start: t0,
          end: Date.now(),
        };
        faults.push(rec);
        out(`  fault at ${rec.atMin.toFixed(1)} min: ${name} (${rec.seconds.toFixed(0)} s): ${note}`);
        // Start to start: a fault every faultEveryMin, whatever each one lasts.
        nextFault = Math.max(Date.now(), t0 + o.faultEveryMin * 60_000);
      } else await sleep(1000);
    }
    await checkpoint();
    const last = checkpoints.at(-1) as Checkpoint;

    // Growth per process: from the first checkpoint at or after the warm-up where it was alive.
    const growth: SoakReport["growth"] = [];
    for (const x of last.processes) {
      const base = checkpoints.find(
        (c) =>
          c.atMin >= o.warmupMin - 0.01 && c !== last && c.processes.some((y) => y.pid === x.pid && y.name === x.name),
      );
      const from = base?.processes.find((y) => y.pid === x.pid && y.name === x.name);
      if (!from) continue;
      growth.push({
        name: x.name,
        pid: x.pid,
        fromMb: from.rssMb,
        toMb: x.rssMb,
        pct: Math.round(((x.rssMb - from.rssMb) / Math.max(1, from.rssMb)) * 100),
      });
    }
    out(`# memory growth after the warm-up (${o.warmupMin} min) to the end, per process (MB):`);
    out(`  ${growth.map((g) => `${g.name} ${g.fromMb}→${g.toMb} (${g.pct >= 0 ? "+" : ""}${g.pct} %)`).join("; ")}`);
    out(`# faults: ${faults.map((x) => `${x.atMin.toFixed(1)} ${x.name}`).join(", ")}`);
    const fin = last.rec;
    out(
      `# final: ${fin.sessions} sessions from ${accepted.size} accepted creates (${fin.live} live), ${actions} user actions (${errors} errors), lost=${fin.lost} stuck=${fin.stuck.length} duplicated=${fin.duplicated}; wallets ${fin.wallets - fin.walletsOff}/${fin.wallets} match their ledger, ${fin.txnsUnbalanced} transactions unbalanced; usage charged ${fin.chargedS} s, lost ${fin.usageLostS} s, charged twice ${fin.usageTwiceS} s, ${fin.unbilledSamples} samples unbilled; webhooks ${fin.webhooksDelivered} delivered, lost ${fin.webhooksLost}, pending ${fin.webhooksPending}, received twice ${fin.webhooksDuplicated} (same webhook-id); p99 quiet ${quietP99} ms, worst window outside faults ${Math.max(...checkpoints.map((c) => (Number.isNaN(c.p99) ? 0 : c.p99)))} ms`,
    );
    if (fin.stuck.length > 0) {
      out(`# leadership and controller starts (${logDir}):`);
      for (const l of leadershipLines(logDir)) out(`  ${l}`);
    }
    return { quietP99, checkpoints, faults, growth, final: fin };
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    clearInterval(drain);
    await fb?.stop();
    await receiver.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
