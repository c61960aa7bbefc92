// The connection test: the registration probe, run again on a registered cluster with its stored
// credential. The result is recorded on the Cluster's status (a change of what we know, not a heartbeat).
import type { Deps } from "../../deps.ts";
import { NotFound } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { requireSuperAdmin } from "./authorize.ts";
import type { ProbeResult } from "./probe.ts";
import { clustersOf } from "./runtime.ts";
import { statusFromProbe } from "./store.ts";

export async function testClusterConnection(deps: Deps, principal: Principal, clusterId: string): Promise<ProbeResult> {
  requireSuperAdmin(principal, "test cluster connections");
  const rt = clustersOf(deps);
  const resource = await rt.store.getCluster(clusterId);
  if (!resource) throw new NotFound("cluster", clusterId);
  const cred = await rt.store.readCredential(resource.spec.credentialSecretRef);
  const probe = await rt.probe(cred);
  await rt.store.patchStatus(
    clusterId,
    statusFromProbe(resource.status, probe, deps.clock.now(), resource.metadata?.generation),
  );
  return probe;
}
