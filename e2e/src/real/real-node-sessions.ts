// What lets Berth's sessions run on a cluster's real node (docs/dev/real-sessions.md), shared by the real-pod
// journeys' fleet (real-fleet.ts) and `npm start` (e2e/src/start/sessions-on-real-node.ts): the cluster's GPU
// RuntimeClass steering session pods onto the real node, a preset that fits this machine, and the session
// images built here offered as the local catalog's.
import { applyLocalSessionImages } from "@berth/api";
import { type BuiltImage, CATALOG_KINDS, pushSessionImage, sessionImageRef } from "@berth/cdk8s/image/sessions";
import { HttpKube, type KubeApi, KubeError } from "@berth/controllers/kube";
import { ResourcePresetKind, resourcePath } from "@berth/crds";
import { kubeConfigFrom } from "../testbed/kubeconfig.ts";
import { REAL_NODE_LABELS, REAL_NODE_TAINT } from "../testbed/real-node/index.ts";

/** 1 GPU, what a JupyterLab needs and this 2-core machine has: the catalog's presets ask 8 CPUs and 64 GiB. */
export const REAL_PRESET = "real-small";

/**
 * Session pods name the cluster's `nvidia` RuntimeClass; Kubernetes merges a RuntimeClass's scheduling into
 * each pod that names it. Here: the real node's taint tolerated and its label selected, so that the
 * cluster's GPU sessions land on the real node, and Berth stays unaware of real and kwok nodes.
 */
export async function steerGpuSessionsToRealNode(cluster: { kubeconfig: string }): Promise<void> {
  const k = new HttpKube(kubeConfigFrom(cluster.kubeconfig));
  try {
    await k.json("PATCH", "/apis/node.k8s.io/v1/runtimeclasses/nvidia", {
      body: {
        scheduling: {
          nodeSelector: { "berth.dev/real-node": REAL_NODE_LABELS["berth.dev/real-node"] },
          tolerations: [{ ...REAL_NODE_TAINT, operator: "Equal" }],
        },
      },
    });
  } finally {
    k.close();
  }
}

/** The preset real sessions use, on the management cluster; one already there is kept. */
export async function ensureRealPreset(mgmt: KubeApi): Promise<void> {
  const preset = ResourcePresetKind.build(
    { name: REAL_PRESET, labels: { "app.kubernetes.io/part-of": "berth" } },
    { displayName: "1 GPU (1 CPU, 2 GiB)", kind: "gpu", cpu: "1", memory: "2Gi", gpuCount: 1 },
  );
  try {
    await mgmt.json("POST", resourcePath(ResourcePresetKind), { body: preset });
  } catch (e) {
    if (!(e instanceof KubeError) || e.status !== 409) throw e;
  }
}

/**
 * Pushes built session images to `pushHost` and offers them in the catalog (jupyterlab-local, …) under
 * `pullHost`, the address the node pulls that registry at (the same one, or a relay to it).
 */
export async function offerSessionImages(
  mgmt: KubeApi,
  built: BuiltImage[],
  pushHost: string,
  pullHost = pushHost,
): Promise<Record<string, { name: string; ref: string }>> {
  const images: Record<string, { name: string; ref: string }> = {};
  const refs: Record<string, string> = {};
  for (const b of built) {
    await pushSessionImage(b, pushHost);
    const kind = CATALOG_KINDS[b.kind];
    const ref = sessionImageRef(b.kind, pullHost, b.tag);
    refs[kind] = ref;
    images[b.kind] = { name: `${kind}-local`, ref };
  }
  await applyLocalSessionImages(mgmt, refs);
  return images;
}
