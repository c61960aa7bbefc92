import { randomBytes } from "node:crypto";

const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";

/** `wal_`, `txn_`, `crq_`, `rfl_` + 20 lowercase alphanumerics, like the identity ids. */
export function billingId(prefix: "wal" | "txn" | "crq" | "rfl"): string {
  let s = "";
  while (s.length < 20) {
    for (const b of randomBytes(24)) if (b < 252 && s.length < 20) s += ALPHABET[b % 36];
  }
  return `${prefix}_${s}`;
}

/** The platform accounts created by the migration. */
export const SYSTEM_WALLET = "wal_system";
export const USAGE_WALLET = "wal_usage";
export const SHORTFALL_WALLET = "wal_shortfall";
