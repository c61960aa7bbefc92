// Every synthesized manifest of every environment, accepted by real kube-apiservers of the test bed with
// a server-side dry run and strict field validation: a misspelt field fails here, not at install. The
// CRDs, namespaces and ServiceAccounts are applied for real first (the rest refers to them); then each
// Deployment's (and StatefulSet's) pod template is dry-run as a Pod, so Pod Security `restricted` admission judges it too.
//
// Not checked: CloudNativePG's `Cluster` (postgresql.cnpg.io), whose CRD belongs to that operator and is
// not on the bed; installing a schema-less stand-in would prove nothing. The test names it as skipped.
import { type Fleet, KubeHttp, startFleet } from "@berth/e2e";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENVIRONMENTS, synthEnvironment } from "./environments.ts";

type Obj = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: { template?: { metadata: unknown; spec: unknown } };
};

const PLURAL: Record<string, string> = {
  Namespace: "namespaces",
  ServiceAccount: "serviceaccounts",
  Secret: "secrets",
  Service: "services",
  Pod: "pods",
  Deployment: "deployments",
  StatefulSet: "statefulsets",
  ConfigMap: "configmaps",
  ClusterRole: "clusterroles",
  ClusterRoleBinding: "clusterrolebindings",
  Role: "roles",
  RoleBinding: "rolebindings",
  NetworkPolicy: "networkpolicies",
  Ingress: "ingresses",
  PodDisruptionBudget: "poddisruptionbudgets",
  HorizontalPodAutoscaler: "horizontalpodautoscalers",
  CustomResourceDefinition: "customresourcedefinitions",
};
const NOT_ON_THE_BED = new Set(["postgresql.cnpg.io/v1/Cluster"]);

function pathOf(o: Obj): string {
  const plural = PLURAL[o.kind];
  if (!plural) throw new Error(`no resource path for ${o.apiVersion} ${o.kind}: add it to PLURAL`);
  const base = o.apiVersion.includes("/") ? `/apis/${o.apiVersion}` : `/api/${o.apiVersion}`;
  const ns = o.metadata.namespace ? `/namespaces/${o.metadata.namespace}` : "";
  return `${base}${ns}/${plural}/${encodeURIComponent(o.metadata.name)}`;
}

/** Server-side apply; `dryRun` leaves nothing behind. Strict: an unknown or duplicate field is an error. */
async function apply(kube: KubeHttp, o: Obj, dryRun: boolean): Promise<{ status: number; text: string }> {
  const q = `?fieldManager=berth-cdk8s&force=true&fieldValidation=Strict${dryRun ? "&dryRun=All" : ""}`;
  const r = await kube.raw("PATCH", pathOf(o) + q, JSON.stringify(o), "application/apply-patch+yaml");
  return { status: r.status, text: r.text };
}

function withClaimVolumes(o: Obj): unknown {
  const spec = o.spec?.template?.spec as { volumes?: unknown[] };
  const claims = (o.spec as { volumeClaimTemplates?: { metadata: { name: string } }[] }).volumeClaimTemplates ?? [];
  if (claims.length === 0) return spec;
  return {
    ...spec,
    volumes: [...(spec.volumes ?? []), ...claims.map((c) => ({ name: c.metadata.name, emptyDir: {} }))],
  };
}

let fleet: Fleet;
let mgmt: KubeHttp;
let gpu: KubeHttp;

beforeAll(async () => {
  fleet = await startFleet({
    clusters: [
      { name: "mgmt", kind: "management" },
      { name: "gpu", kind: "gpu" },
    ],
  });
  const kubeOf = (name: string) => {
    const c = fleet.cluster(name);
    return new KubeHttp({ server: c.server, caPem: c.caPem, token: c.adminToken });
  };
  mgmt = kubeOf("mgmt");
  gpu = kubeOf("gpu");
});

afterAll(async () => {
  mgmt?.close();
  gpu?.close();
  await fleet?.stop();
});

const FIRST = new Set(["CustomResourceDefinition", "Namespace", "ServiceAccount"]);

describe.each(Object.keys(ENVIRONMENTS))("the %s manifests", (env) => {
  it("are accepted by the bed's apiservers (server-side dry run, strict fields)", async () => {
    const skipped: string[] = [];
    for (const { file, chart } of synthEnvironment(ENVIRONMENTS[env] as never)) {
      const kube = file.includes("gpu-") ? gpu : mgmt;
      const objects = chart.toJson() as Obj[];
      for (const o of objects.filter((x) => FIRST.has(x.kind))) {
        const r = await apply(kube, o, false);
        expect(r.status, `${file} ${o.kind}/${o.metadata.name}: ${r.text}`).toBeLessThan(300);
      }
      if (objects.some((o) => o.kind === "CustomResourceDefinition")) await served(kube, objects);
      for (const o of objects.filter((x) => !FIRST.has(x.kind))) {
        if (NOT_ON_THE_BED.has(`${o.apiVersion}/${o.kind}`)) {
          skipped.push(`${o.apiVersion}/${o.kind}`);
          continue;
        }
        const r = await apply(kube, o, true);
        expect(r.status, `${file} ${o.kind}/${o.metadata.name}: ${r.text}`).toBeLessThan(300);
        // A warning (e.g. an unknown field in non-strict mode) would not fail the status: Strict makes it.
        if ((o.kind === "Deployment" || o.kind === "StatefulSet") && o.spec?.template) {
          const pod = {
            apiVersion: "v1",
            kind: "Pod",
            metadata: { name: `${o.metadata.name}-probe`, namespace: o.metadata.namespace },
            // A StatefulSet's claims become its pods' volumes: stand in for them with emptyDirs.
            spec: withClaimVolumes(o),
          };
          const p = await apply(kube, pod as Obj, true);
          expect(p.status, `${file} pod of ${o.metadata.name}: ${p.text}`).toBeLessThan(300);
        }
      }
    }
    expect(skipped).toEqual(env === "kind" ? ["postgresql.cnpg.io/v1/Cluster"] : []);
  });
});

describe("the dry run", () => {
  it("refuses a misspelt field, naming it", async () => {
    const objects = synthEnvironment(ENVIRONMENTS.testbed as never).flatMap(({ chart }) => chart.toJson() as Obj[]);
    const api = objects.find((o) => o.kind === "Deployment" && o.metadata.name === "berth-api") as Obj & {
      spec: Record<string, unknown>;
    };
    const { replicas, ...rest } = api.spec;
    const r = await apply(mgmt, { ...api, spec: { ...rest, replica: replicas } } as Obj, true);
    // Server-side apply answers 500 "failed to create typed patch object" for a field the schema lacks.
    expect(r.status, r.text).toBeGreaterThanOrEqual(400);
    expect(r.text).toContain(".spec.replica: field not declared in schema");
  });

  it("refuses a pod that Pod Security restricted does not admit", async () => {
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "root-probe", namespace: "berth-sessions" },
      spec: { containers: [{ name: "c", image: "busybox", securityContext: { privileged: true } }] },
    };
    const r = await apply(gpu, pod as Obj, true);
    expect(r.status).toBe(403);
    expect(r.text).toContain("restricted");
  });
});

async function served(kube: KubeHttp, objects: Obj[]) {
  for (const crd of objects.filter((o) => o.kind === "CustomResourceDefinition") as unknown as {
    spec: { group: string; versions: { name: string }[]; names: { plural: string } };
  }[]) {
    const path = `/apis/${crd.spec.group}/${crd.spec.versions[0]?.name}/${crd.spec.names.plural}`;
    for (let i = 0; (await kube.raw("GET", path)).status !== 200; i++) {
      if (i > 600) throw new Error(`${path} is never served`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
