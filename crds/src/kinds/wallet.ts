import { z } from "zod";
import { DisplayName, Id, immutable, MinorUnits, ResourceName, SignedMinorUnits } from "../fields.ts";
import { defineKind, statusOf } from "../kind.ts";

/** `system` is the catalog's system wallet, which no person or group owns. */
export const WalletOwnerKind = z.enum(["user", "project", "organization", "system"]);
export type WalletOwnerKind = z.infer<typeof WalletOwnerKind>;

export const WalletConditionType = {
  /** status.balance equals the ledger up to status.lastAppliedSequence. */
  Synced: "Synced",
  /** The balance can pay for running sessions. */
  Funded: "Funded",
} as const;

export const WalletReason = {
  UpToDate: "UpToDate",
  LedgerUnavailable: "LedgerUnavailable",
  BalanceAvailable: "BalanceAvailable",
  BalanceExhausted: "BalanceExhausted",
  SpendLimitReached: "SpendLimitReached",
} as const;

export const WalletSpec = z.object({
  owner: immutable(z.object({ kind: WalletOwnerKind, id: Id })),
  displayName: DisplayName.optional(),
  /** Standing allocations: credits moved from another wallet in this namespace every period. */
  allocations: z
    .array(
      z.object({
        from: ResourceName,
        amount: MinorUnits,
        period: z.enum(["daily", "weekly", "monthly"]),
      }),
    )
    .max(32)
    .default([]),
  limits: z
    .object({
      maxSpendPerDay: MinorUnits.optional(),
      maxSpendPerMonth: MinorUnits.optional(),
      /** How far below zero usage may take the balance before sessions pause. */
      overdraft: MinorUnits.default("0"),
    })
    .default({ overdraft: "0" }),
});
export type WalletSpec = z.infer<typeof WalletSpec>;

export const WalletStatus = statusOf({
  /** Mirrored from the ledger (Postgres is the truth); minor units. */
  balance: SignedMinorUnits.optional(),
  /** The last ledger entry folded into `balance`; mirrors apply only newer sequences. */
  lastAppliedSequence: z.int().min(0).optional(),
});
export type WalletStatus = z.infer<typeof WalletStatus>;

export const WalletKind = defineKind({
  kind: "Wallet",
  plural: "wallets",
  shortNames: ["wal"],
  namespaced: true,
  description: "Credits of a user, project, organization or the system; the ledger in Postgres is the truth.",
  spec: WalletSpec,
  status: WalletStatus,
  printerColumns: [
    { name: "Owner Kind", type: "string", jsonPath: ".spec.owner.kind" },
    { name: "Owner", type: "string", jsonPath: ".spec.owner.id" },
    { name: "Balance", type: "string", jsonPath: ".status.balance", description: "minor units" },
    { name: "Sequence", type: "integer", jsonPath: ".status.lastAppliedSequence", priority: 1 },
  ],
});
export const Wallet = WalletKind.schema;
export type Wallet = z.infer<typeof Wallet>;
