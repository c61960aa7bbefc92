// biome-ignore-all lint/suspicious/noExplicitAny: the apiserver's JSON as it comes
// What a session's timeout cannot show from the API: each GPU cluster's mirror and pods of it, and the
// operators' last reports (the API folds a pending pod's reasons into "waiting for the pod").
import type { IdentityTestApi } from "@berth/api/testing";
import { LABELS, resourcePath, SessionMirrorKind } from "@berth/crds";
import type { Cluster } from "../index.ts";
import { adminKube, SESSIONS_NS } from "./fleet.ts";

/** The session's story on the clusters, as one JSON line for a timeout's message. */
export async function explainSession(
  db: IdentityTestApi["database"]["db"],
  gpu: readonly { name: string; cluster: Cluster }[],
  id: string,
): Promise<string> {
  const out: Record<string, unknown> = {};
  try {
    out.reports = await db("session_status_reports")
      .where({ session: id })
      .select("cluster_id", "phase", "node", "reason", "message", "observed_generation", "at");
    for (const { name, cluster } of gpu) {
      const k = adminKube(cluster);
      try {
        const selector = encodeURIComponent(`${LABELS.sessionId}=${id}`);
        const mirrors = await k.json<{ items: any[] }>(
          "GET",
          `${resourcePath(SessionMirrorKind, { namespace: SESSIONS_NS })}?labelSelector=${selector}`,
        );
        const pods = await k.json<{ items: any[] }>(
          "GET",
          `/api/v1/namespaces/${SESSIONS_NS}/pods?labelSelector=${selector}`,
        );
        out[name] = {
          mirrors: mirrors.items.map((m) => ({
            uid: m.metadata.uid,
            revision: m.spec?.revision,
            deleting: m.metadata.deletionTimestamp,
            finalizers: m.metadata.finalizers,
            assignment: m.spec?.resources?.gpuAssignment,
          })),
          pods: pods.items.map((p) => ({
            uid: p.metadata.uid,
            owner: p.metadata.ownerReferences?.[0]?.uid,
            node: p.spec?.nodeName,
            phase: p.status?.phase,
            deleting: p.metadata.deletionTimestamp,
            conditions: p.status?.conditions?.map((c: any) => `${c.type}=${c.status} ${c.reason ?? ""}`),
          })),
        };
      } finally {
        k.close();
      }
    }
  } catch (err) {
    out.error = String(err);
  }
  return JSON.stringify(out);
}
