// A faster parser for timestamptz values, installed for every pg connection (db/knex.ts). pg's default,
// postgres-date, runs three regular expressions per value; a page of 20 users has 60 timestamps, and
// that parsing showed in the profile of GET /api/v1/users (bench/src/api-list.ts --profile).
//
// The fast path reads what Postgres sends with DateStyle ISO: "YYYY-MM-DD HH:MM:SS[.ffffff]+HH[:MM[:SS]]",
// to the same Date as postgres-date, to the millisecond (tests compare them); anything else (BC,
// infinity, years before 100 or after 9999, another DateStyle) goes to postgres-date itself.
import pg from "pg";

const TIMESTAMPTZ_OID = 1184;
/** pg's own parser (postgres-date), taken before ours replaces it: the fallback, and the tests' reference. */
export const postgresDate = pg.types.getTypeParser(TIMESTAMPTZ_OID, "text") as (value: string) => Date | number | null;

/** The digit at i, or NaN; NaN then fails every check it flows into. */
const digit = (s: string, i: number): number => {
  const c = s.charCodeAt(i) - 48;
  return c >= 0 && c <= 9 ? c : Number.NaN;
};
const two = (s: string, i: number): number => digit(s, i) * 10 + digit(s, i + 1);
const DASH = 45;
const SPACE = 32;
const COLON = 58;
const DOT = 46;
const PLUS = 43;

export function parseTimestamptz(s: string): Date | number | null {
  const n = s.length;
  if (
    n < 22 ||
    s.charCodeAt(4) !== DASH ||
    s.charCodeAt(7) !== DASH ||
    s.charCodeAt(10) !== SPACE ||
    s.charCodeAt(13) !== COLON ||
    s.charCodeAt(16) !== COLON
  )
    return postgresDate(s);
  const year = two(s, 0) * 100 + two(s, 2);
  let i = 19;
  let ms = 0;
  if (s.charCodeAt(i) === DOT) {
    // Milliseconds are the fraction's first three digits: for every fraction Postgres sends (1 to 6
    // digits) that equals postgres-date's trunc(1000 * parseFloat(fraction)), checked exhaustively.
    i += 1;
    let scale = 100;
    while (i < n) {
      const d = digit(s, i);
      if (Number.isNaN(d)) break;
      ms += d * scale;
      scale /= 10;
      i += 1;
    }
    ms = Math.trunc(ms);
  }
  const c = s.charCodeAt(i);
  const sign = c === PLUS ? 1 : c === DASH ? -1 : 0;
  let offset = two(s, i + 1) * 3600;
  i += 3;
  if (s.charCodeAt(i) === COLON) {
    offset += two(s, i + 1) * 60;
    i += 3;
    if (s.charCodeAt(i) === COLON) {
      offset += two(s, i + 1);
      i += 3;
    }
  }
  if (sign === 0 || i !== n || !(year >= 100) || !(offset >= 0)) return postgresDate(s);
  const utc = Date.UTC(year, two(s, 5) - 1, two(s, 8), two(s, 11), two(s, 14), two(s, 17), ms);
  if (Number.isNaN(utc)) return postgresDate(s);
  return new Date(utc - sign * offset * 1000);
}

/** Makes every pg connection of this process parse timestamptz with parseTimestamptz. */
export function installTimestamptzParser(): void {
  pg.types.setTypeParser(TIMESTAMPTZ_OID, parseTimestamptz);
}
