// Rows of the ledger's tables as node-postgres answers them: bigint columns are strings (never numbers).
export type WalletOwnerKind = "user" | "project" | "organization" | "system";

export interface WalletRow {
  id: string;
  organization_id: string | null;
  owner_kind: WalletOwnerKind;
  owner_id: string;
  display_name: string | null;
  overdraft: string;
  max_spend_per_day: string | null;
  max_spend_per_month: string | null;
  allow_negative: boolean;
  balance: string | null;
  last_sequence: string;
  cr_namespace: string | null;
  cr_name: string | null;
  mirrored_sequence: string;
  created_at: Date;
  updated_at: Date;
}

export type TransactionKind = "grant" | "allocation" | "request" | "refill" | "charge" | "reversal";

export interface TransactionRow {
  seq: string;
  id: string;
  kind: TransactionKind;
  amount: string;
  idempotency_key: string | null;
  organization_id: string | null;
  session_id: string | null;
  cluster_id: string | null;
  sample_id: string | null;
  reverses_seq: string | null;
  actor_kind: "user" | "operator" | "system";
  actor_id: string | null;
  request_id: string | null;
  reason: string | null;
  metadata: Record<string, unknown>;
  created_at: Date;
}

export interface EntryRow {
  id: string;
  txn_seq: string;
  wallet_id: string;
  amount: string;
  created_at: Date;
}

/** One line of a wallet's ledger: its entry and the transaction it belongs to. */
export interface WalletLedgerLine extends TransactionRow {
  entry_amount: string;
  /** The wallet's balance after this line (a running sum in sequence order). */
  balance_after: string;
}
