// Where the end-to-end suite's clusters come from: BERTH_E2E_PROVIDER=testbed (the default, what CI runs:
// real kube-apiservers and kwok as local processes, e2e/src/testbed) or kind (kind clusters, for people
// with Docker: e2e/src/provider/kind.ts). Journeys call startFleet from @berth/e2e and get a Fleet either way.
import { startFleet as startTestbedFleet } from "../testbed/fleet.ts";
import type { Fleet, FleetDescription, StartFleetOptions } from "../testbed/types.ts";
import { startKindFleet } from "./kind.ts";

export const PROVIDERS = ["testbed", "kind"] as const;
export type ProviderName = (typeof PROVIDERS)[number];

/** The provider BERTH_E2E_PROVIDER names; unset or empty is the test bed. */
export function providerName(env: NodeJS.ProcessEnv = process.env): ProviderName {
  const v = (env.BERTH_E2E_PROVIDER ?? "").trim();
  if (v === "") return "testbed";
  if ((PROVIDERS as readonly string[]).includes(v)) return v as ProviderName;
  throw new Error(`BERTH_E2E_PROVIDER="${v}" is not a provider; use one of: ${PROVIDERS.join(", ")}`);
}

export function startFleet(
  description: FleetDescription,
  opts: StartFleetOptions & { provider?: ProviderName } = {},
): Promise<Fleet> {
  const provider = opts.provider ?? providerName();
  if (provider === "kind") return startKindFleet(description, opts.log ? { log: opts.log } : {});
  return startTestbedFleet(description, opts);
}
