// Builders for billing tests: wallets, sessions and usage samples in a real Postgres database, and the
// invariants checked after each case.
import type { Knex } from "knex";
import pino from "pino";
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../db/db.test-support.ts";
import { insertUsageSamples } from "../../db/operations/inventory/insertUsageSamples.ts";
import type { WalletRow } from "../../db/operations/ledger/types.ts";
import { TestClock } from "../../http/http.test-support.ts";
import { CreditsContext, type CreditsOptions, type OfferingRate } from "./context.ts";
import { SYSTEM_WALLET } from "./ids.ts";
import { checkLedgerInvariants } from "./invariants.ts";
import { transfer } from "./ledger.ts";
import { ensureWallet } from "./wallets.ts";

export const CREDIT = 1_000_000n;

/** The default catalog's rates. */
export const TEST_OFFERINGS: Record<string, OfferingRate> = {
  h100: { hourlyCreditRate: "4000000", gpuCount: 1 },
  a100: { hourlyCreditRate: "2500000", gpuCount: 1 },
  l4: { hourlyCreditRate: "800000", gpuCount: 1 },
  h100x2: { hourlyCreditRate: "7000000", gpuCount: 2 },
  // Fractional tiers (docs/dev/gpu-sharing.md): the rate is the slice's own.
  "h100-1-8": { hourlyCreditRate: "600000", gpuCount: 1 },
  "h100-1-4": { hourlyCreditRate: "1150000", gpuCount: 1 },
};

/** Slices per card of the fractional test offerings. */
const TEST_SLICES: Record<string, number> = { "h100-1-8": 8, "h100-1-4": 4 };

export function testBilling(
  db: Knex,
  o: { clock?: TestClock; offerings?: Record<string, OfferingRate>; options?: Partial<CreditsOptions> } = {},
) {
  const clock = o.clock ?? new TestClock(new Date("2026-11-22T12:00:00Z"));
  const offerings = o.offerings ?? TEST_OFFERINGS;
  const b = new CreditsContext({
    db,
    clock,
    log: pino({ level: process.env.BERTH_TEST_LOG ?? "silent" }),
    offerings: async (name) => offerings[name],
    ...(o.options ? { options: o.options } : {}),
  });
  return { b, clock };
}

let n = 0;
const uniq = () => `${Date.now().toString(36)}${(n++).toString(36)}`;

export interface TestOrg {
  id: string;
  wallet: WalletRow;
}

/** An organization id with its wallet funded from the system wallet. */
export async function anOrganizationWallet(
  db: Knex,
  credits: bigint,
  at = new Date("2026-11-22T12:00:00Z"),
): Promise<TestOrg> {
  const id = `org_${uniq()}`;
  const { wallet } = await ensureWallet(db, { organizationId: id, kind: "organization", id }, at);
  if (credits > 0n) await grant(db, wallet.id, credits, at);
  return { id, wallet: (await db("wallets").where({ id: wallet.id }).first()) as WalletRow };
}

export async function grant(db: Knex, walletId: string, amount: bigint, at = new Date("2026-11-22T12:00:00Z")) {
  return db.transaction((tx) =>
    transfer(tx, {
      kind: "grant",
      fromWalletId: SYSTEM_WALLET,
      toWalletId: walletId,
      amount,
      actorKind: "system",
      actorId: null,
      reason: "test grant",
      at,
    }),
  );
}

export async function aWallet(
  db: Knex,
  organizationId: string,
  kind: "user" | "project",
  id: string,
  at = new Date("2026-11-22T12:00:00Z"),
): Promise<WalletRow> {
  return (await ensureWallet(db, { organizationId, kind, id }, at)).wallet;
}

export async function balanceOf(db: Knex, walletId: string): Promise<bigint> {
  const w = (await db("wallets").where({ id: walletId }).first()) as WalletRow;
  return BigInt(w.balance ?? "0");
}

export interface TestSession {
  id: string;
  owner_id: string;
  organization_id: string;
  project_id: string | null;
}

export async function aSession(
  db: Knex,
  o: {
    ownerId: string;
    organizationId: string;
    projectId?: string | null;
    offering?: string;
    gpuCount?: number;
    phase?: string;
    clusterId?: string;
    id?: string;
  },
): Promise<TestSession> {
  const id = o.id ?? `ses_${uniq()}`;
  const offering = o.offering ?? "l4";
  await db("sessions").insert({
    id,
    cr_name: id.replace("_", "-"),
    namespace: o.organizationId.replace("_", "-"),
    owner_id: o.ownerId,
    organization_id: o.organizationId,
    project_id: o.projectId ?? null,
    offering,
    preset: "gpu-small",
    image: "jupyterlab",
    gpu_model: "NVIDIA-L4",
    gpu_count: o.gpuCount ?? 1,
    hourly_credit_rate: TEST_OFFERINGS[offering]?.hourlyCreditRate ?? "1000000",
    offering_gpu_count: TEST_OFFERINGS[offering]?.gpuCount ?? 1,
    gpu_slices_per_card: TEST_SLICES[offering] ?? null,
    cluster_id: o.clusterId ?? "clu_a",
    phase: o.phase ?? "Running",
    desired_state: "Running",
  });
  return { id, owner_id: o.ownerId, organization_id: o.organizationId, project_id: o.projectId ?? null };
}

/** Stores usage samples as the internal route does (duplicates dropped). */
export async function usage(
  db: Knex,
  clusterId: string,
  samples: { id: string; session: string; start: Date; seconds: number }[],
): Promise<{ accepted: number; duplicates: number }> {
  return insertUsageSamples(
    db,
    clusterId,
    samples.map((s) => ({
      id: s.id,
      session: s.session,
      start: s.start,
      end: new Date(s.start.getTime() + s.seconds * 1000),
      gpu_seconds: s.seconds,
    })),
  );
}

export async function expectLedgerInvariants(db: Knex): Promise<void> {
  expect(await checkLedgerInvariants(db)).toEqual([]);
}

/** A database of the file's own, with the ledger's invariants checked after every case; dropped at the end. */
export function useLedgerDatabase(): { readonly db: TestDatabase["db"] } {
  let tdb: TestDatabase | undefined;
  beforeAll(async () => {
    tdb = await createTestDatabase();
  });
  afterEach(async () => {
    if (tdb) await expectLedgerInvariants(tdb.db);
  });
  afterAll(async () => {
    await tdb?.drop();
  });
  return {
    get db() {
      if (!tdb) throw new Error("the ledger database is made in beforeAll");
      return tdb.db;
    },
  };
}
