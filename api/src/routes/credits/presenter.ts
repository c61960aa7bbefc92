import type { z } from "zod";
import type { CreditRequestRow } from "../../db/operations/ledger/creditRequests.ts";
import type { MovementRow } from "../../db/operations/ledger/listMovements.ts";
import type { RefillApplicationRow, RefillRow } from "../../db/operations/ledger/refills.ts";
import type { WalletLedgerLine, WalletRow } from "../../db/operations/ledger/types.ts";
import { spendable } from "../../domain/credits/ledger.ts";
import type { Allocation, CreditRequest, LedgerLine, Refill, RefillApplication, Wallet } from "./schemas.ts";

const iso = (d: Date) => new Date(d).toISOString();

export function presentWallet(w: WalletRow, uncachedBalance?: string): z.input<typeof Wallet> {
  return {
    id: w.id,
    organization_id: w.organization_id,
    owner: { kind: w.owner_kind, id: w.owner_id },
    display_name: w.display_name,
    balance: w.balance ?? uncachedBalance ?? "0",
    spendable: w.allow_negative ? "0" : spendable(w).toString(),
    limits: {
      overdraft: w.overdraft,
      max_spend_per_day: w.max_spend_per_day,
      max_spend_per_month: w.max_spend_per_month,
    },
    last_sequence: w.last_sequence,
    resource: w.cr_name && w.cr_namespace ? { namespace: w.cr_namespace, name: w.cr_name } : null,
    created_at: iso(w.created_at),
    updated_at: iso(w.updated_at),
  };
}

export function presentLedgerLine(l: WalletLedgerLine): z.input<typeof LedgerLine> {
  const m = (l.metadata ?? {}) as Record<string, unknown>;
  return {
    sequence: l.seq,
    transaction_id: l.id,
    kind: l.kind,
    amount: l.entry_amount,
    balance_after: l.balance_after,
    at: iso(l.created_at),
    reason: l.reason,
    actor: { kind: l.actor_kind, id: l.actor_id },
    request_id: l.request_id,
    session_id: l.session_id,
    usage:
      l.kind === "charge" && l.cluster_id && l.sample_id
        ? {
            cluster_id: l.cluster_id,
            sample_id: l.sample_id,
            milliseconds: typeof m.ms === "string" ? m.ms : null,
            rate_per_hour: typeof m.rate_per_hour === "string" ? m.rate_per_hour : null,
          }
        : null,
    storage:
      l.kind === "charge" && l.reason === "storage" && typeof m.volume === "string"
        ? {
            volume_id: m.volume,
            from: String(m.from ?? ""),
            to: String(m.to ?? ""),
            gb_milliseconds: String(m.gb_ms ?? "0"),
            rate_per_gb_hour: String(m.rate_per_gb_hour ?? "0"),
          }
        : null,
    reverses: l.reverses_seq,
  };
}

const CSV_COLUMNS = [
  "sequence",
  "transaction_id",
  "at",
  "kind",
  "amount",
  "balance_after",
  "reason",
  "actor_kind",
  "actor_id",
  "request_id",
  "session_id",
  "cluster_id",
  "sample_id",
] as const;

function csvCell(v: string | null | undefined): string {
  const s = v ?? "";
  // Quote what needs it; a leading = + - @ would be a formula in a spreadsheet, so it is quoted and prefixed.
  const safe = /^[=+\-@\t\r]/.test(s) && !/^-?[0-9]+$/.test(s) ? `'${s}` : s;
  return /[",\n\r']/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

export const CSV_HEADER = `${CSV_COLUMNS.join(",")}\r\n`;

export function ledgerCsvRow(l: WalletLedgerLine): string {
  const p = presentLedgerLine(l);
  return `${[p.sequence, p.transaction_id, p.at, p.kind, p.amount, p.balance_after, p.reason, p.actor.kind, p.actor.id, p.request_id, p.session_id, p.usage?.cluster_id ?? null, p.usage?.sample_id ?? null].map(csvCell).join(",")}\r\n`;
}

export function presentMovement(m: MovementRow): z.input<typeof Allocation> {
  return {
    id: m.id,
    sequence: m.seq,
    kind: m.kind as z.input<typeof Allocation>["kind"],
    from_wallet_id: m.from_wallet_id,
    to_wallet_id: m.to_wallet_id,
    amount: m.amount,
    organization_id: m.organization_id,
    reason: m.reason,
    actor: { kind: m.actor_kind, id: m.actor_id },
    request_id: m.request_id,
    at: iso(m.created_at),
  };
}

export function presentCreditRequest(r: CreditRequestRow): z.input<typeof CreditRequest> {
  return {
    id: r.id,
    wallet_id: r.wallet_id,
    organization_id: r.organization_id,
    project_id: r.project_id,
    requester_id: r.requester_id,
    amount: r.amount,
    reason: r.reason,
    status: r.status,
    approved_amount: r.approved_amount,
    decided_by: r.decided_by,
    decision_note: r.decision_note,
    transaction_sequence: r.txn_seq,
    created_at: iso(r.created_at),
    decided_at: r.decided_at ? iso(r.decided_at) : null,
  };
}

export function presentRefill(r: RefillRow): z.input<typeof Refill> {
  return {
    id: r.id,
    wallet_id: r.wallet_id,
    source_wallet_id: r.source_wallet_id,
    organization_id: r.organization_id,
    mode: r.mode,
    amount: r.amount,
    period: r.period,
    enabled: r.enabled,
    starts_at: iso(r.starts_at),
    created_by: r.created_by,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

export function presentRefillApplication(a: RefillApplicationRow): z.input<typeof RefillApplication> {
  return {
    period_start: iso(a.period_start),
    requested: a.requested,
    moved: a.moved,
    transaction_sequence: a.txn_seq,
    applied_at: iso(a.applied_at),
  };
}
