// An administrator rotates a GPU cluster's credential by rewriting its Secret in place (kubectl, as the
// registration leaves no other way) and revokes the old one. The worker's dispatch reads the credential
// through the process's cluster clients (api/src/domain/clusters/clients.ts), which make a new client once
// the Secret says something new: the next session lands on the cluster although the old token is dead.

import { controlPlaneRbac } from "@berth/api/rbac";
import { ClusterKind, type Cluster as ClusterResource, LABELS, resourcePath } from "@berth/crds";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bedApi } from "../api-client.ts";
import { mintControlPlaneCredential } from "../clusters/credentials.ts";
import { KubeHttp } from "../index.ts";
import { until } from "../until.ts";
import { adminKube, gpuCluster, H100, MANAGEMENT, type SessionsBed, startSessionsBed } from "./harness.ts";

// Journeys wait on real clusters; a loaded machine (other beds running) stretches them.
vi.setConfig({ testTimeout: 180_000 });

const h100 = { offering: "h100", preset: "gpu-small", image: "jupyterlab" };
/** The control plane's ServiceAccount as the bed registers it (harness.ts) and the one that replaces it. */
const OLD_ACCOUNT = "berth-control-plane";
const NEW_ACCOUNT = "berth-control-plane-next";

let bed: SessionsBed;
beforeAll(async () => {
  bed = await startSessionsBed({
    fleet: { clusters: [MANAGEMENT, gpuCluster("gpu-a", [{ name: "gpu-a-1", gpuModel: H100, gpuCount: 2 }])] },
    workerCredentialRecheckMs: 500,
  });
});
afterAll(async () => {
  await bed?.stop();
});

/** The token in a kubeconfig's text (the Secret holds one user with a bearer token). */
const tokenIn = (kubeconfig: string): string => {
  const m = /token:\s*"?([^"\s]+)"?/.exec(kubeconfig);
  if (!m?.[1]) throw new Error("the stored credential holds no token");
  return m[1];
};

describe("a GPU cluster's credential rotated in place", () => {
  it("is what the worker dispatches with from then on: a session starts after the old token is revoked", async () => {
    const gpuA = bed.gpu["gpu-a"];
    if (!gpuA) throw new Error("no gpu-a");
    const first = await bed.startRunning(bed.alice, h100);
    expect(first.phase).toBe("Running");

    // The Secret the Cluster resource names, rewritten with a new account's token.
    const mgmt = adminKube(bed.fleet.cluster("mgmt"));
    const gpu = adminKube(gpuA.cluster);
    try {
      const clusters = await mgmt.json<{ items: ClusterResource[] }>("GET", resourcePath(ClusterKind));
      const resource = clusters.items.find((c) => c.spec.id === gpuA.id);
      if (!resource) throw new Error(`no Cluster resource for ${gpuA.id}`);
      const ref = resource.spec.credentialSecretRef;
      const secretPath = `/api/v1/namespaces/${ref.namespace}/secrets/${ref.name}`;
      const secret = await mgmt.json<{ data: Record<string, string> }>("GET", secretPath);
      const key = ref.key ?? "kubeconfig";
      const text = Buffer.from(secret.data[key] as string, "base64").toString("utf8");
      const oldToken = tokenIn(text);
      const next = await mintControlPlaneCredential(gpuA.cluster, { name: NEW_ACCOUNT, rbac: controlPlaneRbac() });
      const rotated = text.replace(oldToken, next.token);
      await mgmt.json("PUT", secretPath, {
        ...secret,
        data: { ...secret.data, [key]: Buffer.from(rotated).toString("base64") },
      });

      // The old account goes, and its token with it.
      const ns = controlPlaneRbac().namespaceRules[0]?.namespace as string;
      await gpu.json("DELETE", `/api/v1/namespaces/${ns}/serviceaccounts/${OLD_ACCOUNT}`);
      const c = gpuA.cluster;
      const withOld = new KubeHttp({ server: c.server, caPem: c.caPem, token: oldToken });
      try {
        await until(
          "the old token refused",
          async () => (await withOld.raw("GET", `/api/v1/namespaces/${ns}/pods`)).status === 401,
          30_000,
        );
      } finally {
        withOld.close();
      }
    } finally {
      mgmt.close();
      gpu.close();
    }

    // Dispatch writes the next session's mirror with the new credential, and terminate deletes the first's.
    const second = await bed.startRunning(bed.alice, h100);
    expect(second.phase).toBe("Running");
    await bedApi(bed, bed.alice).call("terminateSession", { params: { sessionId: first.id } });
    await bed.waitFor(bed.alice, first.id, (s) => s.phase === "Terminated", "Terminated");
    const pods = await bed.pods("gpu-a");
    expect(pods.filter((p) => !p.deleting).map((p) => p.labels[LABELS.sessionId])).toEqual([second.id]);
  });
});
