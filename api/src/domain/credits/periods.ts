// Periods of refills and budgets, in UTC: a day starts at 00:00, a week on Monday 00:00, a month on
// its 1st at 00:00. Pure functions of an instant.
export const PERIODS = ["daily", "weekly", "monthly"] as const;
export type Period = (typeof PERIODS)[number];

export function periodStart(period: Period, at: Date): Date {
  const y = at.getUTCFullYear();
  const m = at.getUTCMonth();
  const d = at.getUTCDate();
  if (period === "monthly") return new Date(Date.UTC(y, m, 1));
  const day = new Date(Date.UTC(y, m, d));
  if (period === "daily") return day;
  const sinceMonday = (day.getUTCDay() + 6) % 7;
  return new Date(day.getTime() - sinceMonday * 86_400_000);
}

export function nextPeriodStart(period: Period, start: Date): Date {
  if (period === "monthly") return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
  return new Date(start.getTime() + (period === "daily" ? 1 : 7) * 86_400_000);
}

/** The starts of every period from the one holding `from` to the one holding `to`, oldest first. */
export function periodStartsBetween(period: Period, from: Date, to: Date, limit = 400): Date[] {
  const out: Date[] = [];
  for (
    let p = periodStart(period, from);
    p.getTime() <= to.getTime() && out.length < limit;
    p = nextPeriodStart(period, p)
  )
    out.push(p);
  // More than `limit` periods missed: the newest `limit` count (a refill does not replay years).
  if (out.length === limit) {
    const last = periodStart(period, to);
    const tail: Date[] = [];
    for (let p = last; tail.length < limit && p.getTime() >= periodStart(period, from).getTime(); ) {
      tail.unshift(p);
      const prev = new Date(p.getTime() - 1);
      p = periodStart(period, prev);
    }
    return tail;
  }
  return out;
}
