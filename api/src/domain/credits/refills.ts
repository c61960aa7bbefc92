// Refills: a schedule that tops a wallet up to an amount (`top_up_to`) or adds an amount (`add`) once
// every period (UTC days, weeks from Monday, months), paid by a source wallet (by default the parent:
// the organization's wallet for a project or a person, the system wallet for an organization).
//
// Exactly once per period: applying a period first inserts (refill, period start) into
// refill_applications, whose primary key admits one row, in the same transaction as the ledger movement
// (key `refill:<id>:<period>`). A second leader, a restarted worker or a retry finds the row and does
// nothing. After downtime, every period since the last applied one is applied, oldest first, each once
// (`top_up_to` then tops up once and moves nothing for the older periods it finds already full).
// A source that cannot pay everything pays what it can; the period counts as applied (`moved` says how
// much) — a refill does not chase a period once it has passed.
import type { Knex } from "knex";
import { insertAuditRecord } from "../../db/operations/audit/insertAuditRecord.ts";
import { findWalletsByOwners } from "../../db/operations/ledger/findWallets.ts";
import { lockWallets } from "../../db/operations/ledger/lockWallets.ts";
import {
  claimRefillPeriod,
  enabledRefills,
  findRefill,
  insertRefill,
  lastApplications,
  type RefillApplicationRow,
  type RefillRow,
  recordRefillApplication,
  refillApplications,
  refillsQuery,
  updateRefill,
} from "../../db/operations/ledger/refills.ts";
import type { WalletRow } from "../../db/operations/ledger/types.ts";
import { type PagedBody, paginate } from "../../db/paging.ts";
import type { Deps } from "../../deps.ts";
import { DomainError, Forbidden, NotFound } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { visibleWalletIds, walletAccess, walletFor } from "./access.ts";
import type { CreditsContext } from "./context.ts";
import { billingId, SYSTEM_WALLET } from "./ids.ts";
import { transfer } from "./ledger.ts";
import { max, units } from "./money.ts";
import { type Period, periodStart, periodStartsBetween } from "./periods.ts";

type D = Pick<Deps, "db" | "clock">;

async function parentWalletId(db: Knex, w: WalletRow): Promise<string | undefined> {
  if (w.owner_kind === "organization") return SYSTEM_WALLET;
  if (!w.organization_id || w.owner_kind === "system") return undefined;
  const [org] = await findWalletsByOwners(db, [
    { organizationId: w.organization_id, kind: "organization", id: w.organization_id },
  ]);
  return org?.id;
}

export async function createRefill(
  deps: D,
  p: Principal,
  input: {
    walletId: string;
    sourceWalletId?: string | undefined;
    mode: "top_up_to" | "add";
    amount: bigint;
    period: Period;
    startsAt?: Date | undefined;
  },
): Promise<RefillRow> {
  const { wallet } = await walletFor(deps.db, p, input.walletId, "see");
  const sourceId = input.sourceWalletId ?? (await parentWalletId(deps.db, wallet));
  if (!sourceId)
    throw new DomainError("bad_request", "this wallet has no parent wallet to pay a refill; name source_wallet_id");
  const { wallet: source } = await walletFor(deps.db, p, sourceId, "manage");
  if (source.id === wallet.id) throw new DomainError("bad_request", "a wallet cannot refill itself");
  if (
    source.id === SYSTEM_WALLET
      ? wallet.owner_kind !== "organization"
      : source.organization_id !== wallet.organization_id
  )
    throw new DomainError(
      "bad_request",
      "a refill is paid by a wallet of the same organization (or by the system wallet, for an organization)",
    );
  const now = deps.clock.now();
  return insertRefill(deps.db, {
    id: billingId("rfl"),
    wallet_id: wallet.id,
    source_wallet_id: source.id,
    organization_id: wallet.organization_id,
    mode: input.mode,
    amount: input.amount.toString(),
    period: input.period,
    starts_at: input.startsAt ?? now,
    created_by: p.userId,
    created_at: now,
  });
}

/** A refill the caller sees (either wallet); `manage` needs the paying wallet managed. */
export async function refillFor(deps: D, p: Principal, id: string, need: "see" | "manage" = "see"): Promise<RefillRow> {
  const r = await findRefill(deps.db, id);
  if (!r) throw new NotFound("refill", id);
  const [target, source] = await Promise.all([
    deps.db("wallets").where({ id: r.wallet_id }).first(),
    deps.db("wallets").where({ id: r.source_wallet_id }).first(),
  ]);
  const [ta, sa] = await Promise.all([
    walletAccess(deps.db, p, target as WalletRow),
    walletAccess(deps.db, p, source as WalletRow),
  ]);
  if (!ta.see && !sa.see) throw new NotFound("refill", id);
  if (need === "manage" && !sa.manage) throw new Forbidden("only the paying wallet's managers change a refill");
  return r;
}

export async function listRefills<Out>(
  deps: D,
  p: Principal,
  q: { page: number; size: number },
  present: (r: RefillRow) => Out,
): Promise<PagedBody<Out>> {
  return paginate(deps.db, refillsQuery(deps.db, await visibleWalletIds(deps.db, p)), q, present);
}

export async function changeRefill(
  deps: D,
  p: Principal,
  id: string,
  c: {
    mode?: "top_up_to" | "add" | undefined;
    amount?: bigint | undefined;
    period?: Period | undefined;
    enabled?: boolean | undefined;
  },
): Promise<RefillRow> {
  await refillFor(deps, p, id, "manage");
  const patch: Partial<Pick<RefillRow, "mode" | "amount" | "period" | "enabled">> = {};
  if (c.mode !== undefined) patch.mode = c.mode;
  if (c.amount !== undefined) patch.amount = c.amount.toString();
  if (c.period !== undefined) patch.period = c.period;
  if (c.enabled !== undefined) patch.enabled = c.enabled;
  return (await updateRefill(deps.db, id, patch, deps.clock.now())) as RefillRow;
}

export async function historyOf(
  deps: D,
  p: Principal,
  id: string,
): Promise<{ refill: RefillRow; applications: RefillApplicationRow[] }> {
  const refill = await refillFor(deps, p, id);
  return { refill, applications: await refillApplications(deps.db, id) };
}

/** One period of one refill, once. Answers what moved (null: the period was applied before). */
export async function applyRefillPeriod(
  b: CreditsContext,
  r: RefillRow,
  start: Date,
): Promise<{ moved: bigint } | null> {
  const now = b.clock.now();
  return b.db.transaction(async (tx) => {
    if (!(await claimRefillPeriod(tx, r.id, start, now))) return null;
    const locked = await lockWallets(tx, [r.wallet_id, r.source_wallet_id]);
    const target = locked.get(r.wallet_id) as WalletRow;
    const amount = units(r.amount);
    const requested = r.mode === "add" ? amount : max(0n, amount - units(target.balance));
    let seq: string | null = null;
    let moved = 0n;
    if (requested > 0n) {
      const t = await transfer(tx, {
        kind: "refill",
        fromWalletId: r.source_wallet_id,
        toWalletId: r.wallet_id,
        amount: requested,
        partial: true,
        actorKind: "system",
        actorId: `refill:${r.id}`,
        reason: `${r.period} refill ${r.mode === "add" ? "adds" : "tops up to"} ${r.amount}`,
        organizationId: r.organization_id,
        idempotencyKey: `refill:${r.id}:${start.toISOString()}`,
        metadata: { refill_id: r.id, period_start: start.toISOString(), requested: requested.toString() },
        requestId: `refill:${r.id}:${start.toISOString()}`,
        at: now,
      });
      seq = t.transaction?.seq ?? null;
      moved = t.moved;
    }
    await recordRefillApplication(tx, { refillId: r.id, periodStart: start, txnSeq: seq, requested, moved });
    // The movement's audit row (actor: the system), linked by the request id the ledger row carries.
    await insertAuditRecord(tx, {
      action: "credits.refill.apply",
      actorKind: "system",
      actorReason: "refill schedule",
      actorId: null,
      organizationId: r.organization_id,
      targetKind: "wallet",
      targetId: r.wallet_id,
      requestId: `refill:${r.id}:${start.toISOString()}`,
      outcome: "success",
      status: 200,
      details: {
        refill_id: r.id,
        period_start: start.toISOString(),
        requested: requested.toString(),
        moved: moved.toString(),
        txn_seq: seq,
      },
      at: now,
    });
    return { moved };
  });
}

/** Every due period of every enabled refill (the worker's loop; any number of runners, each period once). */
export async function applyDueRefills(b: CreditsContext): Promise<{ applied: number; moved: bigint }> {
  const now = b.clock.now();
  const refills = await enabledRefills(b.db);
  const last = await lastApplications(
    b.db,
    refills.map((r) => r.id),
  );
  let applied = 0;
  let moved = 0n;
  for (const r of refills) {
    if (r.starts_at.getTime() > now.getTime()) continue;
    const after = last.get(r.id);
    const from =
      after && after.getTime() >= periodStart(r.period, r.starts_at).getTime()
        ? new Date(after.getTime() + 1)
        : r.starts_at;
    for (const start of periodStartsBetween(r.period, from, now)) {
      if (after && start.getTime() <= after.getTime()) continue;
      try {
        const res = await applyRefillPeriod(b, r, start);
        if (res) {
          applied++;
          moved += res.moved;
        }
      } catch (err) {
        b.log.warn(
          { err, refill: r.id, period: start.toISOString() },
          "a refill period failed; it is retried on the next pass",
        );
        break;
      }
    }
  }
  return { applied, moved };
}
