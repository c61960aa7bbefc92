import { z } from "zod";

// RFC 3339 text of a Date, exactly what Date.prototype.toISOString gives, several times faster: a page of
// users formats 40-60 timestamps, and toISOString was the users presenter's whole cost in the list's
// profile (bench/src/api-list.ts --profile). Years 0000-9999 take the fast path; others, toISOString.
const DAY_MS = 86_400_000;
const MIN_MS = -62_167_219_200_000; // 0000-01-01T00:00:00.000Z
const MAX_MS = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z

const pad2 = (n: number): string => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number): string => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);
const pad4 = (n: number): string => (n < 10 ? `000${n}` : n < 100 ? `00${n}` : n < 1000 ? `0${n}` : `${n}`);

export function isoTimestamp(d: Date): string {
  const t = d.getTime();
  if (!(t >= MIN_MS && t <= MAX_MS)) return d.toISOString(); // NaN and far years: toISOString's answer
  const days = Math.floor(t / DAY_MS);
  let rest = t - days * DAY_MS;
  // Days since 1970-01-01 to a civil date (Howard Hinnant's days_from_civil, inverted).
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const mi = Math.floor(rest / 60_000);
  rest -= mi * 60_000;
  const s = Math.floor(rest / 1000);
  const ms = rest - s * 1000;
  return `${pad4(year)}-${pad2(month)}-${pad2(day)}T${pad2(h)}:${pad2(mi)}:${pad2(s)}.${pad3(ms)}Z`;
}

/**
 * An instant a client sends: RFC 3339 with a zone, read as a Date. `z.coerce.date()` would take any text
 * Date can parse and state no format, so the document and the API disagreed (the fuzzer's finding).
 */
export const Instant = z.iso
  .datetime({ offset: true })
  .transform((s) => new Date(s))
  .meta({ description: "RFC 3339 date-time with a zone (e.g. 2026-11-26T00:00:00Z)." });
