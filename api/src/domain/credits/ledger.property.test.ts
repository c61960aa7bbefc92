// Model-based property test: random sequences of credit operations run against the real ledger (Postgres)
// and against a small in-memory reference ledger; after every operation both must agree on every
// balance, on which operations were refused, and on what each session has been charged.
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { TransactionRow } from "../../db/operations/ledger/types.ts";
import { MAX_SAMPLE_MS } from "../../internal/schemas.ts";
import { billPendingUsage } from "./charge.ts";
import type { CreditsContext } from "./context.ts";
import {
  anOrganizationWallet,
  aSession,
  aWallet,
  grant,
  TEST_OFFERINGS,
  testBilling,
  usage,
  useLedgerDatabase,
} from "./credits.test-support.ts";
import { SHORTFALL_WALLET, SYSTEM_WALLET } from "./ids.ts";
import { reverse, transfer } from "./ledger.ts";

const tdb = useLedgerDatabase();
let billing: CreditsContext;
const at = new Date("2026-11-22T12:00:00Z");

beforeAll(async () => {
  billing = testBilling(tdb.db).b;
});

// ── The reference ledger ──────────────────────────────────────────────────────────────────────────────
// Wallets 0..3: organization, project, user A (in the project), user B (no project). Sessions: 0 is
// A's in the project (draws A → project → organization), 1 is B's (B → organization).
const ORG = 0;
const CHAINS = [
  [2, 1, 0],
  [3, 0],
];
const OFFERING_OF = ["l4", "h100x2"];
const GPUS_OF = [1, 3];

interface Model {
  balances: bigint[];
  shortfall: bigint;
  issued: bigint;
  carries: { carry: bigint; divisor: bigint }[];
  charged: bigint[];
  pending: { id: string; session: number; start: number; ms: number }[];
  delivered: Set<string>;
  /** Transfers that may be reversed (index into `real.transfers`). */
  reversible: number;
  nextSample: number;
}

interface Real {
  run: string;
  wallets: string[];
  sessions: string[];
  transfers: TransactionRow[];
  reversed: Set<number>;
}

function rate(session: number) {
  const o = TEST_OFFERINGS[OFFERING_OF[session] as string] as { hourlyCreditRate: string; gpuCount: number };
  return { perHour: BigInt(o.hourlyCreditRate) * BigInt(GPUS_OF[session] as number), divisor: BigInt(o.gpuCount) };
}

function modelBill(m: Model): void {
  const sorted = [...m.pending].sort((a, b) => a.session - b.session || a.start - b.start || (a.id < b.id ? -1 : 1));
  for (const s of sorted) {
    const r = rate(s.session);
    const c = m.carries[s.session] as { carry: bigint; divisor: bigint };
    const den = 3_600_000n * r.divisor;
    const num = c.carry + r.perHour * BigInt(s.ms);
    const amount = num / den;
    m.carries[s.session] = { carry: num % den, divisor: r.divisor };
    m.charged[s.session] = (m.charged[s.session] as bigint) + amount;
    let left = amount;
    for (const w of CHAINS[s.session] as number[]) {
      const take = left < (m.balances[w] as bigint) ? left : (m.balances[w] as bigint);
      if (take > 0n) {
        m.balances[w] = (m.balances[w] as bigint) - take;
        left -= take;
      }
    }
    m.shortfall += left;
  }
  m.pending = [];
}

// ── Commands ─────────────────────────────────────────────────────────────────────────────────────────
type Cmd = fc.AsyncCommand<Model, Real, false>;

class Grant implements Cmd {
  readonly amount: bigint;
  constructor(amount: bigint) {
    this.amount = amount;
  }
  check = () => true;
  async run(m: Model, r: Real) {
    await tdb.db.transaction((tx) =>
      transfer(tx, {
        kind: "grant",
        fromWalletId: SYSTEM_WALLET,
        toWalletId: r.wallets[ORG] as string,
        amount: this.amount,
        actorKind: "system",
        actorId: null,
        at,
      }),
    );
    m.balances[ORG] = (m.balances[ORG] as bigint) + this.amount;
    m.issued += this.amount;
  }
  toString = () => `grant(${this.amount})`;
}

class Allocate implements Cmd {
  readonly from: number;
  readonly to: number;
  readonly amount: bigint;
  constructor(from: number, to: number, amount: bigint) {
    this.from = from;
    this.to = to;
    this.amount = amount;
  }
  check = () => this.from !== this.to;
  async run(m: Model, r: Real) {
    const can = (m.balances[this.from] as bigint) >= this.amount;
    const p = tdb.db.transaction((tx) =>
      transfer(tx, {
        kind: "allocation",
        fromWalletId: r.wallets[this.from] as string,
        toWalletId: r.wallets[this.to] as string,
        amount: this.amount,
        actorKind: "user",
        actorId: "usr_model",
        at,
      }),
    );
    if (!can) {
      await expect(p).rejects.toMatchObject({ code: "insufficient_credits" });
      return;
    }
    const res = await p;
    if (res.transaction) r.transfers.push(res.transaction);
    m.balances[this.from] = (m.balances[this.from] as bigint) - this.amount;
    m.balances[this.to] = (m.balances[this.to] as bigint) + this.amount;
  }
  toString = () => `allocate(${this.from}→${this.to}, ${this.amount})`;
}

class Reverse implements Cmd {
  readonly pick: number;
  constructor(pick: number) {
    this.pick = pick;
  }
  check = (m: Readonly<Model>) => m.reversible > 0;
  async run(m: Model, r: Real) {
    const i = this.pick % r.transfers.length;
    const t = r.transfers[i] as TransactionRow;
    const legs = (await tdb.db("ledger_entries").where({ txn_seq: t.seq })) as { wallet_id: string; amount: string }[];
    const credited = legs.find((l) => BigInt(l.amount) > 0n) as { wallet_id: string; amount: string };
    const debited = legs.find((l) => BigInt(l.amount) < 0n) as { wallet_id: string; amount: string };
    const to = r.wallets.indexOf(credited.wallet_id);
    const from = r.wallets.indexOf(debited.wallet_id);
    const amount = BigInt(credited.amount);
    const p = tdb.db.transaction((tx) =>
      reverse(tx, t, { actorKind: "user", actorId: "usr_model", reason: "model", at }),
    );
    if (r.reversed.has(i)) {
      await expect(p).rejects.toMatchObject({ code: "conflict" });
      return;
    }
    if ((m.balances[to] as bigint) < amount) {
      await expect(p).rejects.toMatchObject({ code: "insufficient_credits" });
      return;
    }
    await p;
    r.reversed.add(i);
    m.balances[to] = (m.balances[to] as bigint) - amount;
    m.balances[from] = (m.balances[from] as bigint) + amount;
  }
  toString = () => `reverse(#${this.pick})`;
}

class Usage implements Cmd {
  readonly session: number;
  readonly ms: number;
  readonly resend: boolean;
  constructor(session: number, ms: number, resend: boolean) {
    this.session = session;
    this.ms = ms;
    this.resend = resend;
  }
  check = () => true;
  async run(m: Model, r: Real) {
    const n = m.nextSample++;
    // Apart in time (a sample is at most an hour, as the API takes them): time already charged is not
    // charged again (coverage.ts).
    const s = { id: `${r.run}-s${n}`, session: this.session, start: n * MAX_SAMPLE_MS, ms: this.ms };
    const send = async (x: typeof s) =>
      usage(tdb.db, "clu_m", [
        {
          id: x.id,
          session: r.sessions[x.session] as string,
          start: new Date(at.getTime() + x.start),
          seconds: x.ms / 1000,
        },
      ]);
    await send(s);
    m.pending.push(s);
    m.delivered.add(s.id);
    // A duplicate delivery of an earlier sample (or this one): the ledger must not notice.
    if (this.resend) {
      const again = await send(s);
      expect(again.duplicates).toBe(1);
    }
  }
  toString = () => `usage(session ${this.session}, ${this.ms} ms${this.resend ? ", resent" : ""})`;
}

class Bill implements Cmd {
  check = () => true;
  async run(m: Model, _r: Real) {
    await billPendingUsage(billing, { clusterId: "clu_m" });
    modelBill(m);
  }
  toString = () => "bill()";
}

async function compare(m: Model, r: Real) {
  const rows = (await tdb.db("wallets").whereIn("id", r.wallets).select("id", "balance")) as {
    id: string;
    balance: string;
  }[];
  const real = r.wallets.map((id) => BigInt((rows.find((x) => x.id === id) as { balance: string }).balance));
  expect(real).toEqual(m.balances);
  const charged = (await tdb
    .db("billing_sessions")
    .whereIn("session_id", r.sessions)
    .select("session_id", "charged", "carry")) as {
    session_id: string;
    charged: string;
    carry: string;
  }[];
  for (const [i, id] of r.sessions.entries()) {
    const row = charged.find((c) => c.session_id === id);
    expect(BigInt(row?.charged ?? "0")).toBe(m.charged[i]);
    expect(BigInt(row?.carry ?? "0")).toBe((m.carries[i] as { carry: bigint }).carry);
  }
  const shortfall = (await tdb
    .db("ledger_entries as e")
    .join("ledger_transactions as t", "t.seq", "e.txn_seq")
    .whereIn("t.session_id", r.sessions)
    .where("e.wallet_id", SHORTFALL_WALLET)
    .first(tdb.db.raw("coalesce(-sum(e.amount), 0)::text AS s"))) as { s: string };
  expect(BigInt(shortfall.s)).toBe(m.shortfall);
}

const amount = fc.bigInt({ min: 1n, max: 5_000_000n });
// Movements that happen: down from the organization, between the project and its member, and back up.
const PAIRS: [number, number][] = [
  [0, 1],
  [0, 2],
  [0, 3],
  [1, 2],
  [2, 1],
  [1, 0],
  [2, 0],
  [3, 0],
  [3, 2],
];
const commands = [
  fc.bigInt({ min: 1n, max: 20_000_000n }).map((a) => new Grant(a)),
  fc.tuple(fc.constantFrom(...PAIRS), amount).map(([[f, t], a]) => new Allocate(f, t, a)),
  fc.tuple(fc.constantFrom(...PAIRS), amount).map(([[f, t], a]) => new Allocate(f, t, a)),
  fc.nat().map((p) => new Reverse(p)),
  fc
    .tuple(fc.integer({ min: 0, max: 1 }), fc.integer({ min: 0, max: MAX_SAMPLE_MS }), fc.boolean())
    .map(([s, ms, d]) => new Usage(s, ms, d)),
  fc
    .tuple(fc.integer({ min: 0, max: 1 }), fc.integer({ min: 0, max: MAX_SAMPLE_MS }), fc.boolean())
    .map(([s, ms, d]) => new Usage(s, ms, d)),
  fc.constant(new Bill()),
];

let runs = 0;

describe("the ledger against a reference model", () => {
  it("agrees with the model on every balance, refusal and charge over 1,000 random operation sequences", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.bigInt({ min: 0n, max: 3_000_000n }), { minLength: 4, maxLength: 4 }),
        fc.commands(commands, { maxCommands: 10 }),
        async (initial, cmds) => {
          const run = `r${runs++}`;
          const org = await anOrganizationWallet(tdb.db, 0n);
          const project = await aWallet(tdb.db, org.id, "project", `prj_${run}`);
          const userA = await aWallet(tdb.db, org.id, "user", `usr_${run}a`);
          const userB = await aWallet(tdb.db, org.id, "user", `usr_${run}b`);
          const sA = await aSession(tdb.db, {
            ownerId: `usr_${run}a`,
            organizationId: org.id,
            projectId: `prj_${run}`,
            offering: OFFERING_OF[0] as string,
            gpuCount: GPUS_OF[0] as number,
          });
          const sB = await aSession(tdb.db, {
            ownerId: `usr_${run}b`,
            organizationId: org.id,
            offering: OFFERING_OF[1] as string,
            gpuCount: GPUS_OF[1] as number,
          });
          const real: Real = {
            run,
            wallets: [org.wallet.id, project.id, userA.id, userB.id],
            sessions: [sA.id, sB.id],
            transfers: [],
            reversed: new Set(),
          };
          // Every wallet starts with something, so the first usage already meets the draw order.
          for (const [i, a] of initial.entries()) if (a > 0n) await grant(tdb.db, real.wallets[i] as string, a);
          const model: Model = {
            balances: [...initial],
            shortfall: 0n,
            issued: 0n,
            carries: [
              { carry: 0n, divisor: 1n },
              { carry: 0n, divisor: 2n },
            ],
            charged: [0n, 0n],
            pending: [],
            delivered: new Set(),
            reversible: 0,
            nextSample: 0,
          };
          const wrapped = [...cmds].map((c) => ({
            check: (m: Readonly<Model>) => c.check({ ...m, reversible: real.transfers.length } as Model),
            run: async (m: Model, r: Real) => {
              await c.run(m, r);
              m.reversible = r.transfers.length;
              await compare(m, r);
            },
            toString: () => c.toString(),
          }));
          await fc.asyncModelRun(() => ({ model, real }), wrapped);
          // Whatever is still pending is billed at the end: nothing delivered is ever left unbilled.
          await billPendingUsage(billing, { clusterId: "clu_m" });
          modelBill(model);
          await compare(model, real);
        },
      ),
      { numRuns: 1_000, endOnFailure: true },
    );
    expect(runs).toBeGreaterThanOrEqual(1_000);
  }, 1_200_000);
});
