// biome-ignore-all lint/suspicious/noExplicitAny: manifests as they come
// The bed install's checks of its options, before anything is applied or while it waits: a wrong option
// is said in one line naming it (InstallError), not left as a failing pod.
import { type Environment, synthEnvironment } from "@berth/cdk8s/environments";
import { parseRef } from "@berth/cdk8s/image/push";
import type { KubeHttp } from "../testbed/kube.ts";

/** Berth's namespace on the bed. */
export const NS = "berth-system";

/** A wrong option or a missing Secret, said in one line that names the option. */
export class InstallError extends Error {
  readonly option: string;
  constructor(option: string, problem: string) {
    super(`${option}: ${problem}`);
    this.name = "InstallError";
    this.option = option;
  }
}

/** Option paths in `env` whose value is `v` (`controlPlane.image.image`, …). */
export function optionsNaming(env: unknown, v: string, at = ""): string[] {
  if (env === v) return [at];
  if (!env || typeof env !== "object") return [];
  return Object.entries(env).flatMap(([k, x]) => optionsNaming(x, v, at ? `${at}.${k}` : k));
}

const podTemplates = (objs: any[]) =>
  objs
    .filter((o) => ["Deployment", "StatefulSet"].includes(o.kind))
    .map((o) => ({ owner: o, spec: o.spec.template.spec }));

/** Every Secret the pod templates name (env and volumes), with where. */
export function secretsNamed(objs: any[]): { secret: string; where: string }[] {
  const out: { secret: string; where: string }[] = [];
  for (const { owner, spec } of podTemplates(objs)) {
    const where = `${owner.kind} ${owner.metadata.name}`;
    for (const v of spec.volumes ?? []) if (v.secret) out.push({ secret: v.secret.secretName, where });
    for (const c of spec.containers)
      for (const e of c.env ?? [])
        if (e.valueFrom?.secretKeyRef)
          out.push({ secret: e.valueFrom.secretKeyRef.name, where: `${where} (${e.name})` });
  }
  return out;
}

const imagesNamed = (objs: any[]) => [
  ...new Set(podTemplates(objs).flatMap(({ spec }) => spec.containers.map((c: any) => c.image as string))),
];

/** An option naming `value`, else the fallback; for InstallError. */
export const optionFor = (env: Environment, value: string, fallback: string) => {
  const found = optionsNaming(env, value);
  return found.length ? found.join(", ") : fallback;
};

async function manifestExists(ref: string): Promise<string | undefined> {
  let r: ReturnType<typeof parseRef>;
  try {
    r = parseRef(ref);
  } catch (e) {
    return (e as Error).message;
  }
  let res: Response;
  try {
    res = await fetch(`http://${r.host}/v2/${r.repository}/manifests/${r.tag}`, {
      method: "HEAD",
      headers: { accept: "application/vnd.oci.image.manifest.v1+json,application/vnd.oci.image.index.v1+json" },
    });
  } catch (e) {
    return `the registry ${r.host} does not answer (${(e as Error).message})`;
  }
  return res.ok ? undefined : `${ref} is not in the registry (${res.status})`;
}

/** Every image the environment's pods name is in the registry it names (the node pulls from there). */
export async function checkImages(env: Environment, objs?: any[]): Promise<void> {
  objs ??= synthEnvironment(env).flatMap(({ chart }) => chart.toJson() as any[]);
  for (const image of imagesNamed(objs)) {
    const problem = await manifestExists(image);
    if (problem) throw new InstallError(optionFor(env, image, `the image ${image}`), `cannot be pulled: ${problem}`);
  }
}

/**
 * Every Secret the control plane's pods name exists (after the install has made its own): a missing one
 * would leave its pods waiting in CreateContainerConfigError. The operator's token comes later.
 */
export async function checkSecrets(env: Environment, kube: KubeHttp): Promise<void> {
  const cp = synthEnvironment(env)
    .find((c) => c.file.startsWith("10-"))
    ?.chart.toJson() as any[];
  for (const { secret: s, where } of secretsNamed(cp)) {
    const got = await kube.raw("GET", `/api/v1/namespaces/${NS}/secrets/${s}`);
    if (got.status === 404)
      throw new InstallError(
        optionFor(env, s, `the Secret ${s}`),
        `the Secret ${NS}/${s} does not exist (named by ${where}); make it first (docs/deploy.md)`,
      );
  }
}
