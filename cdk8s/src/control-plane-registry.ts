// The control plane's registry option (ControlPlaneOptions.registry, control-plane.ts): where members'
// private images go, as the BERTH_REGISTRY_* the API and the worker read; with `berth`, the registry itself.
import type { Construct } from "constructs";
import * as check from "./options.ts";
import { OptionError } from "./options.ts";
import { type Env, fromSecret, type ImageOptions, plain, type Resources } from "./pod.ts";
import { BerthRegistry } from "./registry.ts";

export interface RegistryChoice {
  /**
   * A registry you run: `url` is where the API and the worker push (http(s)://host[:port]), `pullPrefix`
   * how GPU clusters name it (default the URL's host), `credentialsSecretName` a Secret with keys
   * `username` and `password` if it asks for them.
   */
  external?: { url: string; pullPrefix?: string; credentialsSecretName?: string };
  /**
   * Berth's own registry (cdk8s/src/registry.ts) in this namespace. Its certificate (`tlsSecretName`) must
   * name `pullPrefix` and `berth-registry.<namespace>.svc` (the API's address for it), from a CA the GPU
   * clusters' nodes and the API trust; `htpasswdSecretName` must hold the user in `credentialsSecretName`.
   */
  berth?: {
    pullPrefix: string;
    storageSize: string;
    storageClass?: string;
    tlsSecretName: string;
    htpasswdSecretName: string;
    credentialsSecretName: string;
    /** The GPU clusters' node ranges (pulls) and the build clusters' pod ranges (pushes). */
    allowCidrs: string[];
    /** `LoadBalancer` for GPU and build clusters on other networks. Default `ClusterIP`. */
    serviceType?: "ClusterIP" | "LoadBalancer";
    image?: ImageOptions;
    resources?: Resources;
  };
}

/** BERTH_REGISTRY_* for the API and the worker; with `berth`, the registry itself. */
export function registryEnv(
  scope: Construct,
  r: RegistryChoice | undefined,
  ns: string,
  clientLabels: Record<string, string>[],
): Env[] {
  if (!r) return [];
  if (r.external && r.berth)
    throw new OptionError("registry", "set either registry.external or registry.berth, not both");
  const credentials = (option: string, secret: string | undefined) => {
    if (secret === undefined) return [];
    check.dnsLabel(option, secret);
    return [
      fromSecret("BERTH_REGISTRY_USERNAME", secret, "username"),
      fromSecret("BERTH_REGISTRY_PASSWORD", secret, "password"),
    ];
  };
  if (r.external) {
    const url = check.url("registry.external.url", r.external.url);
    if (r.external.pullPrefix !== undefined)
      check.pullPrefix("registry.external.pullPrefix", r.external.pullPrefix, { path: true });
    return [
      ...plain({ BERTH_REGISTRY_URL: url, BERTH_REGISTRY_PULL_PREFIX: r.external.pullPrefix }),
      ...credentials("registry.external.credentialsSecretName", r.external.credentialsSecretName),
    ];
  }
  if (r.berth) {
    const b = r.berth;
    check.dnsLabel("registry.berth.tlsSecretName", b.tlsSecretName);
    check.dnsLabel("registry.berth.htpasswdSecretName", b.htpasswdSecretName);
    const registry = new BerthRegistry(scope, "registry", {
      option: "registry.berth",
      namespace: ns,
      pullPrefix: b.pullPrefix,
      storageSize: b.storageSize,
      ...(b.storageClass ? { storageClass: b.storageClass } : {}),
      tlsSecret: b.tlsSecretName,
      htpasswdSecret: b.htpasswdSecretName,
      clientLabels,
      allowCidrs: check.cidrs("registry.berth.allowCidrs", b.allowCidrs),
      ...(b.image ? { image: b.image } : {}),
      ...(b.resources ? { resources: b.resources } : {}),
      ...(b.serviceType ? { serviceType: b.serviceType } : {}),
    });
    return [
      ...plain({ BERTH_REGISTRY_URL: registry.url, BERTH_REGISTRY_PULL_PREFIX: registry.pullPrefix }),
      ...credentials("registry.berth.credentialsSecretName", b.credentialsSecretName),
    ];
  }
  throw new OptionError(
    "registry",
    "set registry.external (your registry's URL) or registry.berth, or leave registry out",
  );
}
