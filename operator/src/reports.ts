// What the operator sends the control plane's internal plane while it leads (leader-work.ts), each send
// throwing when it was not taken so its sender retries; and the usage refusals that must not be retried.
import {
  type BuildLogLine,
  type BuildReport,
  UsageRefused,
  type UsageSample,
  type WireStatusReport,
} from "@berth/controllers";
import type {
  BuildLogBatch,
  BuildStatusReport,
  StatusReport,
  StorageReport,
  UsageBatch,
} from "@berth/crds/internal-plane";
import type { InternalClient } from "./controlplane/client.ts";

export class ControlPlaneReports {
  readonly #internal: InternalClient;
  readonly #clusterId: string;

  constructor(internal: InternalClient, clusterId: string) {
    this.#internal = internal;
    this.#clusterId = clusterId;
  }

  async storage(report: StorageReport): Promise<void> {
    const r = await this.#internal.call("PUT", "/internal/v1/storage", report);
    if (!r.ok) throw new Error(`storage report ${r.kind} (${r.status}): ${r.message}`);
  }

  async sessionStatus(reports: WireStatusReport[]): Promise<void> {
    const r = await this.#internal.call("POST", "/internal/v1/sessions/status", {
      cluster_id: this.#clusterId,
      reports,
    } satisfies StatusReport);
    if (!r.ok) throw new Error(`status report ${r.kind} (${r.status}): ${r.message}`);
  }

  async usage(samples: UsageSample[]): Promise<void> {
    const r = await this.#internal.call("POST", "/internal/v1/usage", {
      cluster_id: this.#clusterId,
      samples,
    } satisfies UsageBatch);
    if (r.ok) return;
    const foreign = r.details?.sessions;
    // 403 naming sessions that were never on this cluster: those samples can never land; the rest can.
    if (r.kind === "forbidden" && Array.isArray(foreign) && foreign.length > 0)
      throw new UsageRefused(`usage refused: ${r.message}`, foreign.map(String));
    // 400 naming samples the control plane will never take: dropped by their sessions, or the
    // same batch would be sent for ever and no other usage of this cluster would land.
    const invalid = rejectedSessions(r, samples);
    if (invalid.length > 0) throw new UsageRefused(`usage rejected: ${r.message}`, invalid);
    throw new Error(`usage report ${r.kind} (${r.status}): ${r.message}`);
  }

  buildStatus(reports: BuildReport[]): Promise<void> {
    return this.#post("/internal/v1/image-builds/status", {
      cluster_id: this.#clusterId,
      reports,
    } satisfies BuildStatusReport);
  }

  buildLogs(build: string, lines: BuildLogLine[]): Promise<void> {
    return this.#post("/internal/v1/image-builds/logs", {
      cluster_id: this.#clusterId,
      build,
      lines,
    } satisfies BuildLogBatch);
  }

  async #post(path: string, body: unknown): Promise<void> {
    const r = await this.#internal.call("POST", path, body);
    if (!r.ok) throw new Error(`${path} ${r.kind} (${r.status}): ${r.message}`);
  }
}

/** Sessions of the samples a validation refusal points at (`details.issues[].path`: body, samples, i, …). */
export function rejectedSessions(
  r: { kind: string; code?: string; details?: Record<string, unknown> },
  samples: readonly { session: string }[],
): string[] {
  if (r.kind !== "rejected" || r.code !== "validation_failed") return [];
  const issues = Array.isArray(r.details?.issues) ? (r.details.issues as { path?: unknown }[]) : [];
  const out = new Set<string>();
  for (const i of issues) {
    const path = Array.isArray(i.path) ? i.path : [];
    const at = path.indexOf("samples");
    const index = at >= 0 ? path[at + 1] : undefined;
    const session = typeof index === "number" ? samples[index]?.session : undefined;
    if (session) out.add(session);
  }
  return [...out];
}
