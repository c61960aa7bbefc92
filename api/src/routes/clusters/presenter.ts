import type { z } from "zod";
import type { DeregistrationResult as Deregistration } from "../../domain/clusters/deregister.ts";
import type { IssuedOperatorToken as Issued } from "../../domain/clusters/operatorToken.ts";
import type { ProbeResult } from "../../domain/clusters/probe.ts";
import { probeMessage } from "../../domain/clusters/store.ts";
import type { ClusterView } from "../../domain/clusters/view.ts";
import type { Cluster, ConnectionTestResult, DeregistrationResult, IssuedOperatorToken } from "./schemas.ts";

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

export function presentCluster(v: ClusterView, opts: { admin: boolean }): z.input<typeof Cluster> {
  const probe = v.resource?.status?.probe;
  const token = v.resource?.status?.operatorToken;
  return {
    id: v.row.id,
    name: v.row.name,
    session_domain: v.row.session_domain,
    status: v.row.deregistered_at ? "deregistered" : (probe?.status ?? "unknown"),
    registered_at: v.row.registered_at.toISOString(),
    deregistered_at: iso(v.row.deregistered_at),
    inventory: v.inventory,
    last_report_at: iso(v.row.last_report_at),
    unreachable_since: v.row.deregistered_at ? null : iso(v.row.unreachable_since),
    ...(opts.admin
      ? {
          ...(probe
            ? {
                checks: {
                  reachable: probe.checks.reachable ?? false,
                  gpu_runtime_class: probe.checks.gpu_runtime_class ?? false,
                  gpu_device_plugin: probe.checks.gpu_device_plugin ?? false,
                  credential_permissions: probe.checks.credential_permissions ?? false,
                },
              }
            : {}),
          probed_at: probe?.probedAt ?? null,
          operator_token: token ? { kid: token.kid, issued_at: token.issuedAt, expires_at: token.expiresAt } : null,
        }
      : {}),
  };
}

export function presentIssuedToken(t: Issued): z.input<typeof IssuedOperatorToken> {
  return {
    token: t.token,
    token_type: "Bearer",
    kid: t.kid,
    issued_at: t.issuedAt.toISOString(),
    expires_at: t.expiresAt.toISOString(),
    expires_in: Math.round((t.expiresAt.getTime() - t.issuedAt.getTime()) / 1000),
  };
}

export function presentConnectionTest(p: ProbeResult): z.input<typeof ConnectionTestResult> {
  return {
    status: p.status,
    checks: { ...p.checks },
    probed_at: p.probedAt,
    duration_ms: Math.round(p.durationMs),
    ...(p.serverVersion ? { server_version: p.serverVersion } : {}),
    ...(p.status === "connected" ? {} : { message: probeMessage(p) }),
    ...(p.findings.missingPermissions?.length ? { missing_permissions: p.findings.missingPermissions } : {}),
  };
}

export function presentDeregistration(d: Deregistration): z.input<typeof DeregistrationResult> {
  return {
    id: d.id,
    deregistered_at: d.deregisteredAt.toISOString(),
    removed: { nodes: d.removed.nodes, gpu_devices: d.removed.gpuDevices },
  };
}
