import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "./db.test-support.ts";
import { parseTimestamptz, postgresDate } from "./timestamptz.ts";

const same = (text: string) => {
  const fast = parseTimestamptz(text);
  const slow = postgresDate(text);
  return fast instanceof Date && slow instanceof Date ? fast.getTime() === slow.getTime() : Object.is(fast, slow);
};

describe("parseTimestamptz: the same value as postgres-date, faster", () => {
  it.each([
    "2026-11-22 12:34:56.789999+00",
    "2026-11-22 12:34:56+00",
    "2026-11-22 12:34:56.1+05:30",
    "1999-12-31 23:59:59.000001-08",
    "2024-02-29 00:00:00+05:45:15",
    "0099-01-01 00:00:00+00",
    "0001-01-01 00:00:00+00 BC",
    "12026-01-01 00:00:00+00",
    "infinity",
    "-infinity",
    "2026-11-22 12:34:56.5-03:30",
  ])("agrees on %s", (text) => {
    expect(same(text)).toBe(true);
  });

  it("agrees on any ISO-style value Postgres may send", () => {
    const p2 = (n: number) => String(n).padStart(2, "0");
    fc.assert(
      fc.property(
        fc.integer({ min: 100, max: 9999 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 28 }),
        fc.integer({ min: 0, max: 23 }),
        fc.integer({ min: 0, max: 59 }),
        fc.integer({ min: 0, max: 59 }),
        fc.option(fc.stringMatching(/^[0-9]{1,6}$/)),
        fc.constantFrom("+", "-"),
        fc.integer({ min: 0, max: 15 }),
        fc.option(fc.constantFrom(0, 15, 30, 45)),
        (y, mo, d, h, mi, s, frac, sign, oh, om) => {
          const text = `${String(y).padStart(4, "0")}-${p2(mo)}-${p2(d)} ${p2(h)}:${p2(mi)}:${p2(s)}${frac === null ? "" : `.${frac}`}${sign}${p2(oh)}${om === null ? "" : `:${p2(om)}`}`;
          return same(text);
        },
      ),
      { numRuns: 5000 },
    );
  });

  describe("on what Postgres sends", () => {
    let t: TestDatabase;
    beforeAll(async () => {
      t = await createTestDatabase({ migrate: false });
    });
    afterAll(async () => {
      await t?.drop();
    });

    it.each(["UTC", "America/Sao_Paulo", "Asia/Kolkata", "Asia/Kathmandu", "Pacific/Chatham"])(
      "agrees in time zone %s",
      async (zone) => {
        const texts = await t.db.transaction(async (tx) => {
          await tx.raw(`SET LOCAL TIME ZONE '${zone}'`);
          const r = await tx.raw(
            `SELECT (timestamptz '2026-11-22 12:34:56.789999+00' + make_interval(secs => g * 7777.123457))::text AS t
               FROM generate_series(-500, 500) AS g`,
          );
          return (r.rows as { t: string }[]).map((x) => x.t);
        });
        for (const text of texts) expect(same(text), text).toBe(true);
      },
    );
  });
});
