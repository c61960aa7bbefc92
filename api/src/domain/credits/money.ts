// Money: integer minor units as bigint in code, bigint in SQL, decimal strings on the wire. 1 credit =
// 1,000,000 units (MINOR_UNITS_PER_CREDIT). No float ever holds an amount: parsing refuses anything but
// digits, and arithmetic is BigInt throughout.
import { MINOR_UNITS_PER_CREDIT } from "@berth/crds";

export { MINOR_UNITS_PER_CREDIT };

export const MS_PER_HOUR = 3_600_000n;

/** A non-negative amount as sent on the wire: a string of digits ("0", "2500000"). */
export const MINOR_UNITS_PATTERN = /^(0|[1-9][0-9]{0,18})$/;

/** Parses what Postgres answers for a bigint (a string) or a checked wire string. */
export function units(v: string | number | bigint | null | undefined): bigint {
  if (v === null || v === undefined) return 0n;
  if (typeof v === "bigint") return v;
  if (typeof v === "number") {
    if (!Number.isSafeInteger(v)) throw new Error(`not an integer amount: ${v}`);
    return BigInt(v);
  }
  if (!/^-?(0|[1-9][0-9]*)$/.test(v)) throw new Error(`not an integer amount: ${v}`);
  return BigInt(v);
}

export const min = (a: bigint, b: bigint): bigint => (a < b ? a : b);
export const max = (a: bigint, b: bigint): bigint => (a > b ? a : b);

/** "2.5" for 2,500,000 units: for messages only, never parsed back. */
export function formatCredits(minor: bigint): string {
  const neg = minor < 0n;
  const abs = neg ? -minor : minor;
  const whole = abs / MINOR_UNITS_PER_CREDIT;
  const frac = (abs % MINOR_UNITS_PER_CREDIT).toString().padStart(6, "0").replace(/0+$/, "");
  return `${neg ? "-" : ""}${whole}${frac ? `.${frac}` : ""}`;
}

/**
 * A session's rate in units per hour: the offering's rate is for its own GPU count, so a 2-GPU session
 * on a 1-GPU offering costs twice (the same rule as the sessions' cost preview). Exact: the offering's
 * GPU count divides out only at charging time, through the carried remainder.
 */
export function sessionRate(
  offeringRate: bigint,
  offeringGpus: number,
  sessionGpus: number,
): { perHour: bigint; divisor: bigint } {
  return { perHour: offeringRate * BigInt(sessionGpus), divisor: BigInt(Math.max(1, offeringGpus)) };
}

/**
 * A rate at a share of itself, in thousandths (a borrowed session's multiplier, docs/dev/fair-share.md):
 * exact, the thousandths divide out with the GPU count at charging time.
 */
export function atPermille(rate: { perHour: bigint; divisor: bigint }, permille: number) {
  if (permille === 1000) return rate;
  return { perHour: rate.perHour * BigInt(permille), divisor: rate.divisor * 1000n };
}

/** The cost of `seconds` at `perHour / divisor`, rounded up to a whole unit (quotes and the door). */
export function costOf(rate: { perHour: bigint; divisor: bigint }, seconds: number): bigint {
  const num = rate.perHour * BigInt(seconds);
  const den = 3600n * rate.divisor;
  return (num + den - 1n) / den;
}
