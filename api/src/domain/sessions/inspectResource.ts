// For administrators who know Kubernetes: a session's underlying `Session` object (as `kubectl get -o
// yaml` shows it) and its Kubernetes Events (as `kubectl describe` lists them), through the REST layer,
// without access to the management cluster. Owners see their sessions through the normal detail.
import type { Session } from "@berth/crds";
import { stringify } from "yaml";
import type { Deps } from "../../deps.ts";
import { Forbidden, NotFound, Unavailable } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { readResource, visibleRow } from "./lookup.ts";
import { sessionsRuntimeOf } from "./runtime.ts";
import { isSessionAdmin } from "./visibility.ts";

export interface KubeEventView {
  type: string;
  reason: string;
  message: string;
  count: number;
  firstTimestamp: string | null;
  lastTimestamp: string | null;
  source: string | null;
}

async function adminRow(deps: Deps, principal: Principal, id: string) {
  const row = await visibleRow(deps, principal, id);
  if (!isSessionAdmin(principal, row))
    throw new Forbidden("only administrators of the session's organization may inspect its resource");
  return row;
}

export async function inspectResource(
  deps: Deps,
  principal: Principal,
  id: string,
): Promise<{ resource: Record<string, unknown>; yaml: string }> {
  const row = await adminRow(deps, principal, id);
  const cr = await readResource(deps, row, { asStored: true });
  if (!cr)
    throw new NotFound("session resource", row.cr_name, {
      reason: "deleted after retention; the history remains in GET /api/v1/sessions/{id}",
    });
  const clean = structuredClone(cr) as Session & { metadata: Record<string, unknown> };
  delete clean.metadata.managedFields; // as kubectl hides them by default
  return { resource: clean as unknown as Record<string, unknown>, yaml: stringify(clean) };
}

export async function resourceEvents(deps: Deps, principal: Principal, id: string): Promise<KubeEventView[]> {
  const row = await adminRow(deps, principal, id);
  const { kube } = sessionsRuntimeOf(deps);
  const fieldSelector = `involvedObject.kind=Session,involvedObject.name=${row.cr_name}`;
  const res = await kube
    .request<{ items?: Record<string, unknown>[] }>(
      "GET",
      `/api/v1/namespaces/${encodeURIComponent(row.namespace)}/events`,
      { query: { fieldSelector } },
    )
    .catch((e: unknown) => {
      throw new Unavailable("the management cluster did not answer", { reason: (e as Error).message });
    });
  if (res.status >= 300) throw new Unavailable(`listing the session's events failed (${res.status})`);
  const items = (res.body.items ?? []) as {
    type?: string;
    reason?: string;
    message?: string;
    count?: number;
    firstTimestamp?: string;
    lastTimestamp?: string;
    eventTime?: string;
    metadata?: { creationTimestamp?: string };
    source?: { component?: string };
    reportingComponent?: string;
  }[];
  return items
    .map((e) => ({
      type: e.type ?? "Normal",
      reason: e.reason ?? "",
      message: e.message ?? "",
      count: e.count ?? 1,
      firstTimestamp: e.firstTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp ?? null,
      lastTimestamp: e.lastTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp ?? null,
      source: e.source?.component ?? e.reportingComponent ?? null,
    }))
    .sort((a, b) => (a.firstTimestamp ?? "").localeCompare(b.firstTimestamp ?? ""));
}
