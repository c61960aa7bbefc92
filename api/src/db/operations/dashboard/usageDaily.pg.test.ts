// The daily roll-up (usage_daily, kept by Postgres from usage_samples) against the raw sum it replaces, on
// real Postgres: samples written through the ingest path in batches (duplicates, late arrivals for closed
// days, periods across midnight), then every kind of range — a month, whole days, ragged ends, an hour
// inside one day, open-ended — must give exactly the raw sum, and so must the dashboard's figures.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../db.test-support.ts";
import { insertUsageSamples, type UsageSampleInput } from "../inventory/insertUsageSamples.ts";
import { gpuSeconds } from "./gpuSeconds.ts";
import { spendByProject } from "./spendByProject.ts";
import { rawUsageSecondsSource, usageSecondsSource } from "./usageSeconds.ts";

let t: TestDatabase;
const DAY = 86_400_000;
const START = Date.UTC(2026, 9, 20); // 20 October 2026, a Tuesday at midnight UTC
const SESSIONS = Array.from({ length: 12 }, (_, i) => `ses_roll${String(i).padStart(2, "0")}`);

/** A fixed pseudo-random sequence: the same samples every run. */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1_103_515_245 + 12_345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

function samples(n: number, seed: number, within: [number, number], prefix: string): UsageSampleInput[] {
  const r = random(seed);
  return Array.from({ length: n }, (_, i) => {
    const start = within[0] + Math.floor(r() * (within[1] - within[0]));
    const length = 1000 * (1 + Math.floor(r() * 3600));
    return {
      id: `${prefix}-${i}`,
      session: SESSIONS[Math.floor(r() * SESSIONS.length)] as string,
      start: new Date(start),
      end: new Date(start + length),
      // Thousandths, as the column keeps them: a float sum would drift, the numeric one must not.
      gpu_seconds: Math.round(r() * length) / 1000 + Math.floor(r() * 8) * (length / 1000),
    };
  });
}

const sumOf = async (q: ReturnType<typeof usageSecondsSource>) =>
  String((await t.db.from(q.as("u")).select(t.db.raw("coalesce(sum(u.gpu_seconds), 0)::text as s")).first()).s);

beforeAll(async () => {
  t = await createTestDatabase();
  await t.db.raw(
    `INSERT INTO sessions (id, cr_name, namespace, owner_id, organization_id, project_id, offering, preset, image,
       gpu_model, gpu_count, hourly_credit_rate)
     SELECT id, replace(id, '_', '-'), 'org', CASE WHEN n % 2 = 0 THEN 'usr_even' ELSE 'usr_odd' END,
       CASE WHEN n % 3 = 0 THEN 'org_a' ELSE 'org_b' END, CASE WHEN n % 4 = 0 THEN NULL ELSE 'prj_' || (n % 4) END,
       'h100', 'gpu-small', 'jupyterlab', 'H100', 1, '1'
       FROM unnest(?::text[]) WITH ORDINALITY AS x(id, n)`,
    [SESSIONS],
  );
  // Forty days in batches as operators send them, over a month boundary; then a batch sent again (a
  // retry: every sample a duplicate), and samples of closed days arriving late.
  const all = samples(6000, 7, [START, START + 40 * DAY], "s");
  for (let i = 0; i < all.length; i += 500) await insertUsageSamples(t.db, "clu_a", all.slice(i, i + 500));
  expect(await insertUsageSamples(t.db, "clu_a", all.slice(0, 500))).toEqual({ accepted: 0, duplicates: 500 });
  await insertUsageSamples(t.db, "clu_b", samples(300, 11, [START + DAY, START + 3 * DAY], "late"));
  // One sample exactly at midnight, one ending past it: each counts on the day its period starts.
  await insertUsageSamples(t.db, "clu_a", [
    {
      id: "midnight",
      session: "ses_roll00",
      start: new Date(START + 5 * DAY),
      end: new Date(START + 5 * DAY + 60_000),
      gpu_seconds: 60,
    },
    {
      id: "across",
      session: "ses_roll01",
      start: new Date(START + 6 * DAY - 30_000),
      end: new Date(START + 6 * DAY + 30_000),
      gpu_seconds: 60,
    },
  ]);
}, 120_000);
afterAll(async () => t?.drop());

describe("the daily roll-up of usage samples", () => {
  it("holds exactly the samples' sum and count per session and UTC day", async () => {
    const diff = await t.db.raw(`
      SELECT coalesce(d.session, r.session) AS session, coalesce(d.day, r.day) AS day
        FROM usage_daily d
        FULL JOIN (SELECT session, (period_start AT TIME ZONE 'UTC')::date AS day, sum(gpu_seconds) AS s, count(*) AS n
                     FROM usage_samples GROUP BY 1, 2) r ON r.session = d.session AND r.day = d.day
       WHERE d.gpu_seconds IS DISTINCT FROM r.s OR d.samples IS DISTINCT FROM r.n`);
    expect(diff.rows).toEqual([]);
    const days = await t.db("usage_daily").count<{ n: string }[]>("* as n");
    expect(Number(days[0]?.n)).toBeGreaterThan(300);
  });

  it("gives the raw sum for a month, whole days, ragged ends, an hour and an open end", async () => {
    const ranges: [string, number, number | undefined][] = [
      ["the month of November", Date.UTC(2026, 10, 1), Date.UTC(2026, 11, 1)],
      ["from the month's start, open-ended (the dashboard)", Date.UTC(2026, 10, 1), undefined],
      ["whole days", START + 2 * DAY, START + 9 * DAY],
      ["ragged at both ends", START + 2 * DAY + 3_600_123, START + 30 * DAY - 17_000],
      ["ragged start, open-ended", START + 4 * DAY + 1, undefined],
      ["an hour inside one day", START + 5 * DAY + 3_600_000, START + 5 * DAY + 7_200_000],
      ["from midnight to the next midnight", START + 5 * DAY, START + 6 * DAY],
      ["less than a day across midnight", START + 6 * DAY - 60_000, START + 6 * DAY + 60_000],
      ["before any sample", START - 10 * DAY, START - 9 * DAY],
    ];
    const r = random(99);
    for (let i = 0; i < 25; i++) {
      const a = START - DAY + Math.floor(r() * 42 * DAY);
      ranges.push([`random ${i}`, a, a + Math.floor(r() * 20 * DAY) + 1]);
    }
    for (const [what, from, to] of ranges) {
      const f = new Date(from);
      const e = to === undefined ? undefined : new Date(to);
      expect(await sumOf(usageSecondsSource(t.db, f, e)), what).toBe(await sumOf(rawUsageSecondsSource(t.db, f, e)));
    }
    expect(Number(await sumOf(usageSecondsSource(t.db, new Date(Date.UTC(2026, 10, 1)))))).toBeGreaterThan(0);
  });

  it("gives the dashboard's GPU-seconds and the report's per-project figures exactly as the raw sum does", async () => {
    const month = new Date(Date.UTC(2026, 10, 1));
    for (const f of [
      { all: true },
      { ownerId: "usr_even", ownerOrganizationIds: ["org_a", "org_b"] },
      { projectIds: ["prj_1"] },
    ]) {
      expect(await gpuSeconds(t.db, f, month)).toBe(await gpuSeconds(t.db, f, month, rawUsageSecondsSource));
      const from = new Date(START + DAY / 3);
      const to = new Date(START + 33 * DAY + 999);
      expect(await spendByProject(t.db, f, from, to)).toEqual(
        await spendByProject(t.db, f, from, to, rawUsageSecondsSource),
      );
    }
  });

  it("follows samples removed, and refuses to change a sample's figures in place", async () => {
    const before = await sumOf(usageSecondsSource(t.db, new Date(START), new Date(START + 40 * DAY)));
    await t.db("usage_samples").whereIn("sample_id", ["midnight", "across"]).delete();
    const after = await sumOf(usageSecondsSource(t.db, new Date(START), new Date(START + 40 * DAY)));
    expect(Number(before) - Number(after)).toBeCloseTo(120, 3);
    expect(after).toBe(await sumOf(rawUsageSecondsSource(t.db, new Date(START), new Date(START + 40 * DAY))));
    await expect(t.db("usage_samples").where({ sample_id: "s-1" }).update({ gpu_seconds: 1 })).rejects.toThrow(
      /never change/,
    );
    // Billing's own update goes through.
    expect(await t.db("usage_samples").where({ sample_id: "s-1" }).update({ billed_at: new Date() })).toBe(1);
  });
});
