// Fair share's input to the worker's placement pass (FairShareView in controllers/src/sessions/store.ts):
// the share tree and settings from the ResourcePolicies (the catalog's 5-second cache) and decayed usage
// from the history rows. Fair share is on once any policy sets `fair_share`. Usage moves slowly and its
// read walks four half-lives of runs, while passes run on every change: it is read again at most every
// `usageTtlMs` (30 s).
import { decayedUsage, type FairShareView, resolveSettings } from "@berth/controllers";
import type { Knex } from "knex";
import type { SessionsRuntime } from "../sessions/runtime.ts";
import { projectOrganizations } from "./guarantees.ts";
import { settingsOf, shareTreeOf } from "./tree.ts";
import { usageIntervals } from "./usage.ts";

export function fairShareReader(o: {
  db: Knex;
  sessions: SessionsRuntime;
  usageTtlMs?: number;
}): (now: Date) => Promise<FairShareView | undefined> {
  const ttl = o.usageTtlMs ?? 30_000;
  let cached: { at: number; halfLifeMs: number; usage: FairShareView["usage"] } | undefined;
  return async (now) => {
    const policies = await o.sessions.catalog.policies();
    if (!policies.some((p) => p.spec.fairShare)) return undefined;
    const tree = shareTreeOf(policies, await projectOrganizations(o));
    const settings = settingsOf(policies);
    const { halfLifeMs } = resolveSettings(settings);
    if (!cached || cached.halfLifeMs !== halfLifeMs || Math.abs(now.getTime() - cached.at) >= ttl) {
      const usage = decayedUsage(await usageIntervals(o.db, now, halfLifeMs), now.toISOString(), halfLifeMs);
      cached = { at: now.getTime(), halfLifeMs, usage };
    }
    return { tree, settings, usage: cached.usage };
  };
}
