// What the fault report (faults.ts) and the soak (soak.ts) share: the 1+2 fleet on a Postgres of its own
// reached through a relay, with the API, the worker(s) and gpu-a's operator as processes
// (split-processes.ts), and the faults themselves, each one call: Postgres stopped and started again, a
// partition (the relay hung), an apiserver restarted, the worker leader or an operator SIGKILLed, a
// cluster silenced (its operator SIGSTOPped), the API SIGKILLed and started again. Plus the reads both
// make of the outcome: a session's bill from the ledger, pods per session, covered milliseconds.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, type PostgresServer, startPostgres } from "@berth/api";
import { LABELS } from "@berth/crds";
import { type SessionsBed, type SessionsBedOptions, startSessionsBed } from "@berth/e2e/sessions";
import { relayInChild } from "./relay-process.ts";
import { type Child, type Split, startSplit } from "./split-processes.ts";

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface FaultBed {
  bed: SessionsBed;
  split: Split;
  dir: string;
  /** The server now running (replaced by startPostgresAgain). */
  pg: PostgresServer;
  /** Stops everything this started; safe to call twice. */
  stop(): Promise<void>;

  // The faults.
  stopPostgres(): Promise<void>;
  /** Starts Postgres again on its data and port; answers how long the start took (ms). */
  startPostgresAgain(): Promise<number>;
  /** Postgres answers nothing and refuses nothing (a partition) until heal(). */
  hangPostgres(): void;
  healPostgres(): void;
  /** Stops the cluster's apiserver and starts it again (etcd kept). */
  restartApiserver(cluster: string): Promise<void>;
  /** SIGKILLs the operator of the split's GPU cluster. */
  killOperator(): void;
  restartOperator(): Promise<Child>;
  /** SIGSTOPs the operator (its cluster goes silent); the returned function SIGCONTs it. */
  silenceOperator(): () => void;
  /** SIGKILLs the API process. */
  killApi(): void;
  restartApi(): Promise<Child>;
}

/**
 * Starts Postgres (behind a relay the hang fault can stop), the sessions bed on `fleet`, and replaces its
 * API, worker and `gpuCluster`'s operator with processes.
 */
export async function startFaultBed(opts: {
  fleet: NonNullable<SessionsBedOptions["fleet"]>;
  gpuCluster: string;
  usageIntervalMs: number;
  env?: { api?: Record<string, string>; worker?: Record<string, string> };
  bed?: Omit<SessionsBedOptions, "fleet">;
  /** Where the split processes' output is kept (startSplit's logDir). */
  logDir?: string;
}): Promise<FaultBed> {
  const dir = mkdtempSync(join(tmpdir(), "berth-faults-"));
  const pgPort = await freePort();
  let pg = await startPostgres({ dataDir: join(dir, "pg"), port: pgPort });
  // Everyone reaches it through a relay the hang fault can stop (a partition); the relay reconnects to the
  // server after the stop fault restarts it. The bed's databases are made through it (db.test-support.ts).
  // It runs in a process of its own (relay-process.ts).
  const relay = await relayInChild(pg.url);
  process.env.DATABASE_URL = relay.url;
  let bed: SessionsBed | undefined;
  let split: Split | undefined;
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await split?.stop();
    await bed?.stop();
    relay.heal();
    await relay.cut();
    await pg.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    bed = await startSessionsBed({ ...opts.bed, fleet: opts.fleet });
    split = await startSplit(bed, {
      gpuCluster: opts.gpuCluster,
      onSignal: stop,
      usageIntervalMs: opts.usageIntervalMs,
      ...(opts.env ? { env: opts.env } : {}),
      ...(opts.logDir ? { logDir: opts.logDir } : {}),
    });
  } catch (err) {
    await stop();
    throw err;
  }
  const b = bed;
  const s = split;
  const fb: FaultBed = {
    bed: b,
    split: s,
    dir,
    get pg() {
      return pg;
    },
    stop,
    stopPostgres: () => pg.stop(),
    async startPostgresAgain() {
      const t0 = Date.now();
      pg = await startPostgres({ dataDir: join(dir, "pg"), port: pgPort });
      return Date.now() - t0;
    },
    hangPostgres: () => relay.hang(),
    healPostgres: () => relay.heal(),
    restartApiserver: (cluster) => b.fleet.cluster(cluster).restartApiServer(),
    killOperator: () => void s.operator.proc.kill("SIGKILL"),
    restartOperator: () => s.restartOperator(),
    silenceOperator() {
      const pid = s.operator.pid;
      process.kill(pid, "SIGSTOP");
      return () => process.kill(pid, "SIGCONT");
    },
    killApi: () => void s.api.proc.kill("SIGKILL"),
    restartApi: () => s.restartApi(),
  };
  return fb;
}

/** Pods per session on a GPU cluster, by the session's label, terminating ones included. */
export async function podsPerSession(bed: SessionsBed, cluster: string): Promise<Map<string, number>> {
  const n = new Map<string, number>();
  for (const p of await bed.pods(cluster)) {
    const key = p.labels[LABELS.session] ?? p.name;
    n.set(key, (n.get(key) ?? 0) + 1);
  }
  return n;
}

/** Milliseconds of the union of the spans, within [from, to). */
export function covered(spans: readonly { start: number; end: number }[], from = 0, to = Number.MAX_SAFE_INTEGER) {
  const xs = spans
    .map((x) => [Math.max(x.start, from), Math.min(x.end, to)] as const)
    .filter(([a, z]) => z > a)
    .sort((x, y) => x[0] - y[0]);
  let total = 0;
  let cur: [number, number] | undefined;
  for (const [a, z] of xs) {
    if (cur && a <= cur[1]) cur[1] = Math.max(cur[1], z);
    else {
      if (cur) total += cur[1] - cur[0];
      cur = [a, z];
    }
  }
  return total + (cur ? cur[1] - cur[0] : 0);
}

export interface Bill {
  charges: { start: number; end: number; ms: number }[];
  /** Milliseconds charged. */
  ms: number;
  /** End of the latest interval charged (0: none). */
  until: number;
  /** Samples stored but not billed yet. */
  unbilled: number;
}

/**
 * A session's bill as the ledger has it: each charge with the usage interval it billed and the
 * milliseconds it charged (charging bills a moment once: a sample over time already charged is charged
 * for what is new only), and how many of its samples are stored but not billed yet.
 */
export async function billOf(db: SessionsBed["t"]["database"]["db"], session: string): Promise<Bill> {
  const { rows } = (await db.raw(
    `SELECT u.period_start, u.period_end, t.metadata FROM ledger_transactions t
       JOIN usage_samples u ON u.cluster_id = t.cluster_id AND u.sample_id = t.sample_id
      WHERE t.kind = 'charge' AND t.session_id = ?`,
    [session],
  )) as { rows: { period_start: Date; period_end: Date; metadata: { ms?: string } }[] };
  const charges = rows.map((r) => ({
    start: new Date(r.period_start).getTime(),
    end: new Date(r.period_end).getTime(),
    ms: Number(r.metadata?.ms ?? 0),
  }));
  const [unbilled] = (await db("usage_samples").where({ session }).whereNull("billed_at").count({ n: "*" })) as {
    n: string;
  }[];
  return {
    charges,
    ms: charges.reduce((a, c) => a + c.ms, 0),
    until: charges.reduce((a, c) => Math.max(a, c.end), 0),
    unbilled: Number(unbilled?.n ?? 0),
  };
}
