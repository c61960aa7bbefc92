// Registering a GPU cluster: probe first, accept only what passes, then keep the registration in three
// places — the Postgres row (history that outlives the cluster), the credential Secret and the Cluster
// resource (management cluster) — and issue the operator token, shown once.
import type { Cluster } from "@berth/crds";
import { findClusterById } from "../../db/operations/clusters/findClusterById.ts";
import { insertCluster } from "../../db/operations/clusters/insertCluster.ts";
import { deleteCluster as deleteClusterRow } from "../../db/operations/clusters/updateCluster.ts";
import { sqlState, UNIQUE_VIOLATION } from "../../db/sqlstate.ts";
import type { Deps } from "../../deps.ts";
import { Conflict, DomainError, Invalid } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { requireSuperAdmin } from "./authorize.ts";
import { CredentialFormatError, type CredentialInput, normalizeCredential } from "./credential.ts";
import { newClusterId } from "./ids.ts";
import type { IssuedOperatorToken } from "./operatorToken.ts";
import type { ProbeResult } from "./probe.ts";
import { installOperatorToken } from "./rotateToken.ts";
import { clustersOf } from "./runtime.ts";
import { probeMessage, statusFromProbe } from "./store.ts";
import { type ClusterView, getClusterView } from "./view.ts";

export interface RegisterClusterInput {
  name: string;
  session_domain: string;
  credential: CredentialInput;
}

export interface RegisteredCluster {
  view: ClusterView;
  probe: ProbeResult;
  token: IssuedOperatorToken;
}

/** The probe's verdict as a refusal, most fundamental first; undefined when the cluster is accepted. */
export function refusalOf(probe: ProbeResult): DomainError | undefined {
  const details = {
    status: probe.status,
    checks: probe.checks,
    probe_duration_ms: probe.durationMs,
    ...(probe.findings.error ? { error: probe.findings.error } : {}),
    ...(probe.findings.runtimeClass ? { runtime_class: probe.findings.runtimeClass } : {}),
    ...(probe.findings.devicePlugin
      ? {
          device_plugin: {
            daemon_sets: probe.findings.devicePlugin.daemonSets,
            gpu_nodes: probe.findings.devicePlugin.gpuNodes,
          },
        }
      : {}),
    ...(probe.findings.missingPermissions ? { missing_permissions: probe.findings.missingPermissions } : {}),
  };
  const msg = probeMessage(probe);
  if (probe.status === "unreachable")
    return new DomainError("cluster_unreachable", `the cluster's API server is not reachable: ${msg}`, details);
  if (probe.status === "unauthorized")
    return new DomainError("cluster_credential_invalid", "the cluster refused the credential (401)", details);
  // Permissions first: without them the other checks cannot see what they look for.
  if (!probe.checks.credential_permissions)
    return new DomainError(
      "cluster_credential_insufficient",
      `the credential lacks permissions Berth needs: ${(probe.findings.missingPermissions ?? []).join(", ")}`,
      details,
    );
  if (!probe.checks.gpu_runtime_class) return new DomainError("gpu_runtime_class_missing", msg, details);
  if (!probe.checks.gpu_device_plugin) return new DomainError("gpu_device_plugin_missing", msg, details);
  return undefined;
}

export async function registerCluster(
  deps: Deps,
  principal: Principal,
  input: RegisterClusterInput,
): Promise<RegisteredCluster> {
  requireSuperAdmin(principal, "register clusters");
  let cred: ReturnType<typeof normalizeCredential>;
  try {
    cred = normalizeCredential(input.credential);
  } catch (e) {
    if (e instanceof CredentialFormatError)
      throw new Invalid(e.message, [
        { path: ["body", ...e.field.split(".")], message: e.message, code: "invalid_credential" },
      ]);
    throw e;
  }
  const rt = clustersOf(deps);
  // Cheap check before a probe that may take two minutes; the unique index decides races.
  const taken = await deps.db("clusters").where({ name: input.name }).whereNull("deregistered_at").first("id");
  if (taken)
    throw new Conflict(
      `a registered cluster is already named ${input.name}`,
      { name: input.name, cluster_id: taken.id },
      "already_exists",
    );

  const probe = await rt.probe(cred);
  const refusal = refusalOf(probe);
  if (refusal) {
    deps.log.info(
      {
        kind: "Cluster",
        name: input.name,
        server: cred.server,
        status: probe.status,
        checks: probe.checks,
        code: refusal.code,
      },
      "cluster registration refused",
    );
    throw refusal;
  }

  const id = newClusterId();
  const now = deps.clock.now();
  try {
    await insertCluster(deps.db, {
      id,
      name: input.name,
      session_domain: input.session_domain,
      registered_by: principal.userId,
      registered_at: now,
    });
  } catch (e) {
    if (sqlState(e) === UNIQUE_VIOLATION)
      throw new Conflict(`a registered cluster is already named ${input.name}`, { name: input.name }, "already_exists");
    throw e;
  }
  let secretRef: { namespace: string; name: string; key: string } | undefined;
  let resource: Cluster | undefined;
  try {
    secretRef = await rt.store.createCredentialSecret(id, cred);
    resource = await rt.store.createCluster({ id, name: input.name, sessionDomain: input.session_domain, secretRef });
    await rt.store.patchStatus(id, statusFromProbe(undefined, probe, now, resource.metadata?.generation));
    const token = await installOperatorToken(deps, id);
    deps.log.info(
      { kind: "Cluster", name: resource.metadata?.name, id, displayName: input.name, kid: token.kid },
      "cluster registered",
    );
    return { view: await getClusterView(deps, id), probe, token };
  } catch (e) {
    // Half a registration is none: undo what was made, newest first, and report the original error.
    await rt.store.deleteCluster(id).catch((err: unknown) => deps.log.error({ err, id }, "undo: Cluster not deleted"));
    if (secretRef)
      await rt.store
        .deleteCredentialSecret(secretRef)
        .catch((err: unknown) => deps.log.error({ err, id }, "undo: credential Secret not deleted"));
    if (await findClusterById(deps.db, id)) await deleteClusterRow(deps.db, id);
    throw e;
  }
}
