// A build cluster's operator side for tests and benches: the ImageBuild CRD and the builds namespace as
// the operator's install makes them, an operator token of the cluster, the control plane's internal
// listener, and the build controller the operator runs (controllers/src/builds/), reporting over real
// HTTP with that token.
import { type RunningBuildController, startImageBuildController } from "@berth/controllers";
import { HttpKube } from "@berth/controllers/kube";
import { ImageBuildKind, resourcePath } from "@berth/crds";
import { loadCrds } from "@berth/crds/manifests";
import type { KubeConfig } from "@kubernetes/client-node";
import type { Logger } from "pino";
import type { Deps } from "../../deps.ts";
import { startInternalListener } from "../../internal/app.ts";
import { OperatorTokens } from "../clusters/operatorToken.ts";
import type { ClustersRuntime } from "../clusters/runtime.ts";
import { generateSigningKeyPem, signingKeyFromPem } from "../clusters/signingKey.ts";

export interface BuildOperator {
  controller: RunningBuildController;
  /** The build cluster, as the operator's client. */
  kube: HttpKube;
  /** The internal listener and the cluster's operator token, for tests that call it themselves. */
  internalUrl: string;
  token: string;
  stop(): Promise<void>;
}

/** The namespace the operator's install makes: privileged enforced (rootless BuildKit), restricted warned. */
export function buildsNamespace(name: string) {
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name,
      labels: {
        "app.kubernetes.io/part-of": "berth",
        "pod-security.kubernetes.io/enforce": "privileged",
        "pod-security.kubernetes.io/warn": "restricted",
        "pod-security.kubernetes.io/audit": "restricted",
      },
    },
  };
}

/** What the operator's install does on a build cluster (with an administrator's client): the CRD, the namespace. */
export async function installBuildsOn(kube: HttpKube, ns: string): Promise<void> {
  const crd = loadCrds().find((c) => c.metadata.name === ImageBuildKind.crdName);
  const put = await kube.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", { body: crd });
  if (put.status !== 201 && put.status !== 409) throw new Error(`installing the ImageBuild CRD: ${put.status}`);
  const nsMade = await kube.request("POST", "/api/v1/namespaces", { body: buildsNamespace(ns) });
  if (nsMade.status !== 201 && nsMade.status !== 409) throw new Error(`making namespace ${ns}: ${nsMade.status}`);
  for (let i = 0; ; i++) {
    if ((await kube.request("GET", resourcePath(ImageBuildKind, { namespace: ns }))).status === 200) break;
    if (i > 300) throw new Error("the ImageBuild CRD was never served");
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The operator's build controller with `kubeConfig` (the operator's grants), reporting to its own internal listener. */
export async function startBuildOperator(o: {
  deps: Deps;
  clusterId: string;
  /** The build cluster, with the operator's grants. */
  kubeConfig: KubeConfig;
  log: Logger;
  flushMs?: number;
  /** The build nodes' labels (the operator's BERTH_OPERATOR_BUILDS_NODE_SELECTOR). */
  nodeSelector?: Record<string, string>;
}): Promise<BuildOperator> {
  const ns = o.deps.config.images?.builds.namespace ?? "berth-builds";
  const kube = new HttpKube(o.kubeConfig);
  const tokens = new OperatorTokens({
    key: await signingKeyFromPem(generateSigningKeyPem()),
    clock: { now: () => new Date() },
  });
  const issued = await tokens.issue(o.clusterId);
  await o.deps.db("clusters").where({ id: o.clusterId }).update({ operator_token_jti: issued.jti });
  const plane = await startInternalListener(
    { ...o.deps, clusters: { tokens } as unknown as ClustersRuntime },
    {
      allowCidrs: ["127.0.0.0/8"],
      host: "127.0.0.1",
      port: 0,
    },
  );
  if (!plane) throw new Error("the internal listener did not start");
  const post = async (path: string, body: unknown) => {
    const r = await fetch(`${plane.url}${path}`, {
      method: "POST",
      headers: { Authorization: `Bearer ${issued.token}`, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  };
  const controller = startImageBuildController({
    kube,
    clusterId: o.clusterId,
    namespace: ns,
    ...(o.nodeSelector ? { nodeSelector: o.nodeSelector } : {}),
    log: o.log,
    reportStatus: (reports) => post("/internal/v1/image-builds/status", { cluster_id: o.clusterId, reports }),
    sendLogs: (build, lines) => post("/internal/v1/image-builds/logs", { cluster_id: o.clusterId, build, lines }),
    ...(o.flushMs !== undefined ? { options: { flushMs: o.flushMs } } : {}),
  });
  return {
    controller,
    kube,
    internalUrl: plane.url,
    token: issued.token,
    async stop() {
      await controller.stop();
      await plane.close();
      kube.close();
    },
  };
}
