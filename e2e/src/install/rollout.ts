// biome-ignore-all lint/suspicious/noExplicitAny: the apiserver's JSON as it comes
// Waiting for Berth's workloads on the bed to roll out, and ending the wait early, with the option to
// blame, when a pod cannot pull, start or be scheduled.
import type { Environment } from "@berth/cdk8s/environments";
import type { KubeHttp } from "../testbed/kube.ts";
import { InstallError, NS, optionFor } from "./checks.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The first reason a pod of these labels cannot start, or undefined. */
function stuck(pod: any): { reason: string; message: string; image: string } | undefined {
  for (const s of pod.status?.containerStatuses ?? []) {
    const w = s.state?.waiting;
    if (w && ["ErrImagePull", "ImagePullBackOff", "CreateContainerConfigError", "InvalidImageName"].includes(w.reason))
      return { reason: w.reason, message: w.message ?? "", image: s.image };
    if (w?.reason === "CrashLoopBackOff")
      return { reason: w.reason, message: s.lastState?.terminated?.reason ?? "", image: s.image };
  }
  return undefined;
}

/** How long a pod may stay unschedulable before a rollout's wait gives up on it. */
const UNSCHEDULABLE_MS = 120_000;

/**
 * Resolves once the Deployment or StatefulSet has rolled out its current template: every replica updated
 * and Ready, none of an older revision left. A pod that cannot pull or start ends the wait (InstallError
 * naming the option); a crash loop is waited on a while (a process waiting for Postgres restarts a few times).
 */
export async function rolledOut(
  kube: KubeHttp,
  env: Environment,
  kind: "deployments" | "statefulsets",
  name: string,
  o: { timeoutMs: number; interrupted?: () => void },
): Promise<void> {
  const deadline = Date.now() + o.timeoutMs;
  for (;;) {
    o.interrupted?.();
    const d = await kube.json<any>("GET", `/apis/apps/v1/namespaces/${NS}/${kind}/${name}`);
    const want = d.spec.replicas ?? 1;
    const st = d.status ?? {};
    const ok =
      (st.observedGeneration ?? 0) >= d.metadata.generation &&
      (st.readyReplicas ?? 0) >= want &&
      (st.updatedReplicas ?? 0) >= want &&
      (st.replicas ?? 0) <= want;
    if (ok) return;
    const sel = Object.entries(d.spec.selector.matchLabels)
      .map(([k, v]) => `${k}=${v}`)
      .join(",");
    const pods = await kube.json<any>("GET", `/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent(sel)}`);
    for (const p of pods.items) {
      // A pod no node can take (a rolling update's extra pod on a full node) will not start by waiting.
      const unschedulable = p.status?.conditions?.find(
        (c: any) => c.type === "PodScheduled" && c.status === "False" && c.reason === "Unschedulable",
      );
      if (unschedulable && Date.now() - Date.parse(unschedulable.lastTransitionTime) > UNSCHEDULABLE_MS)
        throw new Error(`${kind.slice(0, -1)} ${name}: pod ${p.metadata.name} unschedulable: ${unschedulable.message}`);
      const s = stuck(p);
      if (!s) continue;
      const missing = /secret "([^"]+)" not found/.exec(s.message)?.[1];
      if (missing)
        throw new InstallError(
          optionFor(env, missing, `the Secret ${missing}`),
          `the Secret ${NS}/${missing} does not exist (pod ${p.metadata.name})`,
        );
      if (s.reason !== "CrashLoopBackOff")
        throw new InstallError(
          optionFor(env, s.image, `the image ${s.image}`),
          `${s.reason} on pod ${p.metadata.name}: ${s.message.split("\n")[0]}`,
        );
      // A process that waits for another (the API for Postgres) restarts a few times on a first install.
      const restarts = p.status.containerStatuses?.[0]?.restartCount ?? 0;
      if (restarts < 6 && Date.now() < deadline) continue;
      const logs = await kube.raw("GET", `/api/v1/namespaces/${NS}/pods/${p.metadata.name}/log?previous=true`);
      throw new Error(
        `${kind.slice(0, -1)} ${name}: pod ${p.metadata.name} crashes (${restarts} restarts): ${
          logs.text
            .split("\n")
            .filter((l) => l.trim() && !/^\s+at /.test(l))
            .at(-1) ?? ""
        }`,
      );
    }
    if (Date.now() > deadline)
      throw new Error(`${kind.slice(0, -1)} ${name} not ready in ${o.timeoutMs / 1000} s: ${JSON.stringify(d.status)}`);
    await sleep(1000);
  }
}

/** Berth's Deployments and StatefulSets on the bed, each rolled out (rolledOut). */
export async function allRolledOut(install: { kube: KubeHttp }, env: Environment, timeoutMs: number): Promise<void> {
  await Promise.all([
    ...["berth-api", "berth-worker", "berth-operator", "berth-gateway"].map((n) =>
      rolledOut(install.kube, env, "deployments", n, { timeoutMs }),
    ),
    ...["berth-postgres", "berth-metrics"].map((n) => rolledOut(install.kube, env, "statefulsets", n, { timeoutMs })),
  ]);
}
