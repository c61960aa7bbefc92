// What the fleet did: the dashboard, its monitoring panels and the audit log.
import type { QueryOf } from "../api/client.ts";
import { api } from "./context.ts";

export function loadDashboard(cluster: string | undefined, signal?: AbortSignal) {
  return api.call("getDashboard", { query: cluster ? { cluster } : {} }, { signal });
}

export function loadMonitoringPanel(panelId: string, query: QueryOf<"getMonitoringPanel">, signal?: AbortSignal) {
  return api.call("getMonitoringPanel", { params: { panelId }, query }, { signal });
}

export function loadAuditLogs(query: QueryOf<"listAuditLogs">, signal?: AbortSignal) {
  return api.call("listAuditLogs", { query }, { signal });
}

/** The audit log as CSV for a bounded range (a blob to save: the bearer token cannot ride on a plain link). */
export function exportAuditLogs(query: Record<string, string>) {
  return api.fetchRaw(`/api/v1/audit-logs/export?${new URLSearchParams(query)}`);
}
