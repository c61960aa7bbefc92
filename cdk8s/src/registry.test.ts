// Berth's registry as a construct: a restricted pod with TLS and htpasswd from Secrets, deletes on, one
// volume, reachable only from the API's and worker's pods and the given ranges.
import { Chart, Testing } from "cdk8s";
import { describe, expect, it } from "vitest";
import { OptionError } from "./options.ts";
import { BerthRegistry } from "./registry.ts";

// biome-ignore lint/suspicious/noExplicitAny: manifests as they come
type Obj = { kind: string; metadata: { name: string }; spec: Record<string, any> };

const base = {
  namespace: "berth-system",
  storageSize: "500Gi",
  tlsSecret: "berth-registry-tls",
  htpasswdSecret: "berth-registry-htpasswd",
  pullPrefix: "registry.berth.example.com",
  clientLabels: [{ "app.kubernetes.io/name": "berth-api" }, { "app.kubernetes.io/name": "berth-worker" }],
  allowCidrs: ["10.20.0.0/16"],
};

function synth(o = base) {
  const chart = new Chart(Testing.app(), "c");
  const r = new BerthRegistry(chart, "registry", o);
  return { r, objects: chart.toJson() as Obj[] };
}

describe("Berth's registry", () => {
  it("runs restricted, with TLS, htpasswd and deletes, and names itself as the control plane's options want", () => {
    const { r, objects } = synth();
    expect(r.url).toBe("https://berth-registry.berth-system.svc:5000");
    expect(r.pullPrefix).toBe("registry.berth.example.com");
    const sts = objects.find((o) => o.kind === "StatefulSet") as Obj;
    const pod = sts.spec.template.spec;
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
    const c = pod.containers[0];
    expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    expect(c.resources.limits).toMatchObject({ memory: "1Gi" });
    const env = Object.fromEntries(c.env.map((e: { name: string; value: string }) => [e.name, e.value]));
    expect(env).toMatchObject({ REGISTRY_AUTH: "htpasswd", REGISTRY_STORAGE_DELETE_ENABLED: "true" });
    expect(pod.volumes).toContainEqual({ name: "tls", secret: { secretName: "berth-registry-tls" } });
    expect(sts.spec.volumeClaimTemplates[0].spec.resources.requests.storage).toBe("500Gi");
  });

  it("admits only the API's and the worker's pods and the given ranges", () => {
    const policy = synth().objects.find((o) => o.kind === "NetworkPolicy") as Obj;
    expect(policy.spec.ingress).toEqual([
      {
        from: [
          { podSelector: { matchLabels: { "app.kubernetes.io/name": "berth-api" } } },
          { podSelector: { matchLabels: { "app.kubernetes.io/name": "berth-worker" } } },
          { ipBlock: { cidr: "10.20.0.0/16" } },
        ],
        ports: [{ protocol: "TCP", port: 5000 }],
      },
    ]);
  });

  it("refuses a size, a host or a range it cannot use", () => {
    expect(() => synth({ ...base, storageSize: "lots" })).toThrow(OptionError);
    expect(() => synth({ ...base, pullPrefix: "https://registry" })).toThrow(OptionError);
    expect(() => synth({ ...base, allowCidrs: ["everywhere"] })).toThrow(OptionError);
    // Shaped like a CIDR, but no address: refused as the control plane's own ranges are.
    expect(() => synth({ ...base, allowCidrs: ["999.1.1.1/8"] })).toThrow(/allowCidrs\[0\]/);
  });
});
