// Wire shapes of /api/v1/credits. Every amount is a string of integer minor units (1 credit =
// 1,000,000 units), never a JSON number: no float ever holds money.
import { z } from "zod";
import { Page } from "../../db/paging.ts";

const Timestamp = z.string().meta({ description: "RFC 3339, UTC." });
const Id = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_:-]+$/);

export const Amount = z
  .string()
  .regex(/^[1-9][0-9]{0,17}$/, "a positive whole number of minor units, as a string")
  .meta({
    id: "Amount",
    description: "Minor units as a decimal string (1 credit = 1000000). Amounts are never JSON numbers.",
    example: "2500000",
  });
export const AmountOrZero = z
  .string()
  .regex(/^(0|[1-9][0-9]{0,17})$/, "a whole number of minor units, as a string")
  .meta({ description: "Minor units as a decimal string (1 credit = 1000000)." });
const SignedAmount = z
  .string()
  .meta({ description: "Signed minor units as a decimal string; negative left the wallet." });
const Reason = z.string().regex(/\S/, "not only spaces").trim().min(1).max(1000);

export const WalletParams = z.object({ walletId: Id });
export const RequestParams = z.object({ requestId: Id });
export const RefillParams = z.object({ refillId: Id });

export const Wallet = z
  .object({
    id: z.string().meta({ example: "wal_0q4w7e2r9t1y6u3i8o5p" }),
    organization_id: z.string().nullable(),
    owner: z.object({ kind: z.enum(["user", "project", "organization", "system"]), id: z.string() }),
    display_name: z.string().nullable(),
    balance: SignedAmount,
    // A sum (balance + overdraft), so not bounded by the 18 digits an amount sent in may have: a
    // wallet with a large balance and the largest overdraft would otherwise answer 500.
    spendable: z
      .string()
      .regex(/^(0|[1-9][0-9]*)$/)
      .meta({
        description:
          "What the wallet can pay now: its balance down to its floor (minus the overdraft), in minor units.",
      }),
    limits: z.object({
      overdraft: AmountOrZero,
      max_spend_per_day: AmountOrZero.nullable(),
      max_spend_per_month: AmountOrZero.nullable(),
    }),
    last_sequence: z.string().meta({ description: "The newest ledger sequence number applied to the balance." }),
    resource: z
      .object({ namespace: z.string(), name: z.string() })
      .nullable()
      .meta({ description: "The Wallet custom resource that mirrors it (kubectl get wallets)." }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: "Wallet" });

export const ListWalletsQuery = Page.extend({
  organization: Id.optional().meta({
    description: "Only this organization's wallets (ignored when outside your scope).",
  }),
  owner_kind: z.enum(["user", "project", "organization", "system"]).optional(),
  owner_id: Id.optional().meta({
    description: "Only the wallets of this user or project (an empty page when you may not see them).",
  }),
});

export const OpenWalletBody = z
  .object({
    organization_id: Id,
    owner_kind: z.enum(["organization", "project", "user"]),
    owner_id: Id.optional().meta({ description: "The project or user; omitted for the organization's own wallet." }),
    display_name: z.string().regex(/\S/, "not only spaces").trim().min(1).max(128).optional(),
  })
  .meta({ id: "OpenWalletRequest" });

export const ChangeWalletBody = z
  .object({
    display_name: z.string().regex(/\S/, "not only spaces").trim().min(1).max(128).nullable().optional(),
    limits: z
      .object({
        overdraft: AmountOrZero.optional().meta({
          description: "How far below zero usage may take the balance (super_admin only).",
        }),
        max_spend_per_day: AmountOrZero.nullable().optional(),
        max_spend_per_month: AmountOrZero.nullable().optional(),
      })
      .optional(),
  })
  .meta({ id: "ChangeWalletRequest" });

export const LedgerQuery = Page.extend({
  from: z.iso.datetime({ offset: true }).optional().meta({ description: "Lines at or after this instant." }),
  to: z.iso.datetime({ offset: true }).optional().meta({ description: "Lines before this instant." }),
  kind: z
    .string()
    .regex(/^(grant|allocation|request|refill|charge|reversal)(,(grant|allocation|request|refill|charge|reversal))*$/)
    .optional()
    .meta({ description: "Comma-separated kinds: grant, allocation, request, refill, charge, reversal." }),
});
export const LedgerExportQuery = LedgerQuery.omit({ page: true, size: true });

export const LedgerLine = z
  .object({
    sequence: z.string(),
    transaction_id: z.string(),
    kind: z.enum(["grant", "allocation", "request", "refill", "charge", "reversal"]),
    amount: SignedAmount.meta({ description: "What this line moved in or out of the wallet (signed minor units)." }),
    balance_after: SignedAmount,
    at: Timestamp,
    reason: z.string().nullable(),
    actor: z.object({ kind: z.string(), id: z.string().nullable() }),
    request_id: z.string().nullable().meta({ description: "Links the movement to its audit row." }),
    session_id: z.string().nullable(),
    usage: z
      .object({
        cluster_id: z.string(),
        sample_id: z.string(),
        milliseconds: z.string().nullable(),
        rate_per_hour: z.string().nullable(),
      })
      .nullable()
      .meta({ description: "For charges: the usage interval charged and the rate (minor units per hour)." }),
    storage: z
      .object({
        volume_id: z.string(),
        from: Timestamp,
        to: Timestamp,
        gb_milliseconds: z.string(),
        rate_per_gb_hour: z.string(),
      })
      .nullable()
      .optional()
      .meta({
        description: "For storage charges: the volume, the span charged, and the rate (minor units per GB-hour).",
      }),
    reverses: z.string().nullable().meta({ description: "The sequence number this line reverses." }),
  })
  .meta({ id: "LedgerLine" });

export const Allocation = z
  .object({
    id: z.string(),
    sequence: z.string(),
    kind: z.enum(["grant", "allocation", "request", "refill", "reversal"]),
    from_wallet_id: z.string().nullable(),
    to_wallet_id: z.string().nullable(),
    amount: AmountOrZero,
    organization_id: z.string().nullable(),
    reason: z.string().nullable(),
    actor: z.object({ kind: z.string(), id: z.string().nullable() }),
    request_id: z.string().nullable(),
    at: Timestamp,
  })
  .meta({ id: "Allocation" });

export const ListAllocationsQuery = Page.extend({
  wallet_id: Id.optional().meta({ description: "Only movements in or out of this wallet." }),
  kind: z.enum(["grant", "allocation", "request", "refill", "reversal"]).optional(),
});

export const AllocateBody = z
  .object({
    from_wallet_id: Id,
    to_wallet_id: Id,
    amount: Amount,
    reason: Reason,
  })
  .meta({ id: "AllocateRequest" });

export const CreditRequest = z
  .object({
    id: z.string(),
    wallet_id: z.string(),
    organization_id: z.string(),
    project_id: z.string().nullable(),
    requester_id: z.string(),
    amount: Amount,
    reason: z.string(),
    status: z.enum(["pending", "approved", "partially_approved", "denied", "cancelled"]),
    approved_amount: AmountOrZero.nullable(),
    decided_by: z.string().nullable(),
    decision_note: z.string().nullable(),
    transaction_sequence: z.string().nullable(),
    created_at: Timestamp,
    decided_at: Timestamp.nullable(),
  })
  .meta({ id: "CreditRequest" });

export const AskBody = z
  .object({
    organization_id: Id,
    project_id: Id.optional().meta({
      description:
        "Ask for the project's wallet (you must belong to it); omitted: your own wallet in the organization.",
    }),
    amount: Amount,
    reason: Reason,
  })
  .meta({ id: "CreditRequestCreate" });

export const ListRequestsQuery = Page.extend({
  status: z.enum(["pending", "approved", "partially_approved", "denied", "cancelled"]).optional(),
  organization: Id.optional(),
});

export const ApproveBody = z
  .object({
    amount: Amount.optional().meta({ description: "Less than asked: partly approved. Omitted: all of it." }),
    from_wallet_id: Id.optional().meta({ description: "The paying wallet; by default the organization's." }),
    note: z.string().trim().max(1000).optional(),
  })
  .meta({ id: "CreditRequestApproval" });
export const DenyBody = z.object({ note: z.string().trim().max(1000).optional() }).meta({ id: "CreditRequestDenial" });

const PeriodEnum = z
  .enum(["daily", "weekly", "monthly"])
  .meta({ description: "UTC: days start at 00:00, weeks on Monday, months on the 1st." });

export const Refill = z
  .object({
    id: z.string(),
    wallet_id: z.string(),
    source_wallet_id: z.string(),
    organization_id: z.string().nullable(),
    mode: z.enum(["top_up_to", "add"]),
    amount: Amount,
    period: PeriodEnum,
    enabled: z.boolean(),
    starts_at: Timestamp,
    created_by: z.string(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: "Refill" });

export const RefillApplication = z
  .object({
    period_start: Timestamp,
    requested: AmountOrZero,
    moved: AmountOrZero,
    transaction_sequence: z.string().nullable(),
    applied_at: Timestamp,
  })
  .meta({ id: "RefillApplication" });
export const RefillDetail = Refill.extend({ applications: z.array(RefillApplication) }).meta({ id: "RefillDetail" });

export const CreateRefillBody = z
  .object({
    wallet_id: Id,
    source_wallet_id: Id.optional().meta({
      description:
        "The paying wallet; by default the parent (organization's wallet, or the system wallet for an organization).",
    }),
    mode: z.enum(["top_up_to", "add"]),
    amount: Amount,
    period: PeriodEnum,
    starts_at: z.iso
      .datetime({ offset: true })
      .optional()
      .meta({ description: "The first period applied is the one holding this instant (default: now)." }),
  })
  .meta({ id: "RefillCreate" });

export const ChangeRefillBody = z
  .object({
    mode: z.enum(["top_up_to", "add"]).optional(),
    amount: Amount.optional(),
    period: PeriodEnum.optional(),
    enabled: z.boolean().optional(),
  })
  .meta({ id: "RefillChange" });
