// The committed manifests are what the constructs make today, and every pod in them meets the
// production defaults (limits, non-root, read-only root, a token only where the Kubernetes API is called).
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { ENVIRONMENTS, synthEnvironment } from "./environments.ts";
import { readDist, synthAll } from "./synth.ts";

type Obj = { kind: string; metadata: { name: string; namespace?: string }; spec?: Record<string, never> };

describe("cdk8s/dist", () => {
  it("is what the constructs synthesize now (run `npm run synth -w cdk8s` when this fails)", () => {
    const fresh = synthAll();
    const committed = readDist();
    expect([...committed.keys()].sort()).toEqual([...fresh.keys()].sort());
    for (const [file, text] of fresh) expect(committed.get(file), file).toBe(text);
  });
});

const allObjects = (env: string): Obj[] =>
  synthEnvironment(ENVIRONMENTS[env] as never).flatMap(({ chart }) => chart.toJson() as Obj[]);

describe.each(Object.keys(ENVIRONMENTS))("the %s environment", (env) => {
  const objects = allObjects(env);
  const deployments = objects.filter((o) => o.kind === "Deployment") as unknown as {
    metadata: { name: string };
    spec: { template: { spec: Record<string, unknown> & { containers: Record<string, unknown>[] } } };
  }[];

  it("runs every container non-root, read-only, without privileges, with requests and limits", () => {
    // One operator and gateway per GPU cluster (the kind environment has two).
    expect([...new Set(deployments.map((d) => d.metadata.name))].sort()).toEqual([
      "berth-api",
      "berth-gateway",
      "berth-operator",
      "berth-worker",
    ]);
    for (const d of deployments) {
      const pod = d.spec.template.spec;
      expect(pod.securityContext, d.metadata.name).toMatchObject({
        runAsNonRoot: true,
        seccompProfile: { type: "RuntimeDefault" },
      });
      for (const c of pod.containers) {
        expect(c.securityContext, d.metadata.name).toEqual({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          runAsNonRoot: true,
          capabilities: { drop: ["ALL"] },
        });
        expect(c.resources, d.metadata.name).toMatchObject({
          requests: { cpu: expect.any(String), memory: expect.any(String) },
          limits: { memory: expect.any(String) },
        });
        expect(c.readinessProbe, d.metadata.name).toMatchObject({ httpGet: { path: "/healthz" } });
        expect(c.livenessProbe, d.metadata.name).toMatchObject({ httpGet: { path: "/healthz" } });
        // Liveness waits for a start that may itself wait 120 s for Postgres (api/src/db/knex.ts DATABASE_WAIT_MS).
        expect(c.startupProbe, d.metadata.name).toMatchObject({ httpGet: { path: "/healthz" } });
        const startup = c.startupProbe as { periodSeconds: number; failureThreshold: number };
        expect(startup.periodSeconds * startup.failureThreshold, d.metadata.name).toBeGreaterThan(120);
      }
    }
  });

  it("mounts a service-account token only in pods that call the Kubernetes API", () => {
    const tokens = Object.fromEntries(
      deployments.map((d) => [d.metadata.name, d.spec.template.spec.automountServiceAccountToken]),
    );
    expect(tokens).toEqual({ "berth-api": true, "berth-worker": true, "berth-operator": true, "berth-gateway": false });
    for (const sa of objects.filter((o) => o.kind === "ServiceAccount"))
      expect((sa as unknown as { automountServiceAccountToken: boolean }).automountServiceAccountToken).toBe(false);
  });

  it("spreads the API over zones and nodes and keeps it available through drains", () => {
    const api = deployments.find((d) => d.metadata.name === "berth-api");
    expect(api?.spec.template.spec.topologySpreadConstraints).toHaveLength(2);
    expect(objects.find((o) => o.kind === "PodDisruptionBudget" && o.metadata.name === "berth-api")).toBeDefined();
    expect(objects.find((o) => o.kind === "HorizontalPodAutoscaler")).toBeDefined();
  });

  it("enforces Pod Security restricted on the session namespace behind a default-deny policy", () => {
    const ns = objects.find((o) => o.kind === "Namespace" && o.metadata.name === "berth-sessions") as unknown as {
      metadata: { labels: Record<string, string> };
    };
    expect(ns.metadata.labels["pod-security.kubernetes.io/enforce"]).toBe("restricted");
    const deny = objects.find((o) => o.kind === "NetworkPolicy" && o.metadata.namespace === "berth-sessions");
    expect(deny?.spec).toEqual({ podSelector: {}, policyTypes: ["Ingress", "Egress"] });
  });

  it("opens the internal listener only to the configured ranges and the namespace's operator and gateway pods", () => {
    const internalOptions = ENVIRONMENTS[env]?.controlPlane.internal;
    const cidrs = internalOptions?.policyCidrs ?? internalOptions?.allowCidrs ?? [];
    const policy = objects.find((o) => o.kind === "NetworkPolicy" && o.metadata.name === "berth-api") as unknown as {
      spec: { ingress: { from?: Record<string, unknown>[]; ports: { port: number }[] }[] };
    };
    const internal = policy.spec.ingress.find((r) => r.ports.some((p) => p.port === 8081));
    const part = { "app.kubernetes.io/part-of": "berth" };
    expect(internal?.from).toEqual([
      ...cidrs.map((cidr) => ({ ipBlock: { cidr } })),
      // No namespaceSelector: the control plane's own namespace only.
      { podSelector: { matchLabels: { "app.kubernetes.io/name": "berth-operator", ...part } } },
      { podSelector: { matchLabels: { "app.kubernetes.io/name": "berth-gateway", ...part } } },
    ]);
  });
});

describe("the committed YAML", () => {
  it("parses back into the synthesized objects", () => {
    for (const [file, text] of readDist()) {
      const docs = parseAllDocuments(text);
      for (const d of docs) expect(d.errors, file).toEqual([]);
      expect(docs.length, file).toBeGreaterThan(0);
    }
  });
});
