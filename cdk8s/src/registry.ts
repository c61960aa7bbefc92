// Berth's OCI registry (docs/dev/images.md): where imports and builds push members' private images and
// where GPU clusters pull them by digest. The CNCF distribution registry as a StatefulSet with one volume,
// behind TLS and htpasswd (both Secrets the platform team provides: Berth never holds the keys), deletes
// on (a member's deleted image goes). Its NetworkPolicy admits the API and the worker (imports, digest
// checks) by pod labels and the ranges that pull or push from elsewhere: GPU clusters' nodes and build
// clusters' build pods. `url` and `pullPrefix` are what ControlPlaneOptions.registry takes.
import { ApiObject } from "cdk8s";
import { Construct } from "constructs";
import { addressRange, ingressPolicy, podsLabelled, service } from "./network.ts";
import * as check from "./options.ts";
import { container, type ImageOptions, labelsOf, podSpec, type Resources, storedStatefulSetSpec } from "./pod.ts";
import { ServiceAccountWithRules } from "./rbac.ts";

export interface RegistryOptions {
  /** The option path errors name. Default `registry`. */
  option?: string;
  namespace: string;
  /** Default `registry:3.0.0`. */
  image?: ImageOptions;
  /** The volume's size, e.g. `500Gi` (imports are up to BERTH_IMAGE_MAX_BYTES each, 20 members' worth × 20). */
  storageSize: string;
  storageClass?: string;
  /** A kubernetes.io/tls Secret for the registry's host name (`pullPrefix`). */
  tlsSecret: string;
  /** A Secret with key `htpasswd` (bcrypt entries): the API's and worker's user and the builders' push user. */
  htpasswdSecret: string;
  /** How GPU clusters name the registry in image references, e.g. `registry.berth.example.com`. */
  pullPrefix: string;
  /** Pods of this namespace that reach it (the API's and the worker's labels). */
  clientLabels: Record<string, string>[];
  /** Ranges outside the namespace that pull or push: GPU clusters' nodes, build clusters' pods. */
  allowCidrs: string[];
  /**
   * `LoadBalancer` when GPU or build clusters are other clusters (externalTrafficPolicy Local, so the policy
   * sees their addresses; source ranges `allowCidrs`). Default `ClusterIP`.
   */
  serviceType?: "ClusterIP" | "LoadBalancer";
  resources?: Resources;
}

export const REGISTRY_PORT = 5000;
export const REGISTRY_IMAGE = "registry:3.0.0";
export const REGISTRY_RESOURCES: Resources = {
  requests: { cpu: "250m", memory: "256Mi" },
  limits: { cpu: "2", memory: "1Gi" },
};

export class BerthRegistry extends Construct {
  /** BERTH_REGISTRY_URL for the API and the worker (in-cluster, over TLS). */
  readonly url: string;
  /** BERTH_REGISTRY_PULL_PREFIX. */
  readonly pullPrefix: string;

  constructor(scope: Construct, id: string, o: RegistryOptions) {
    super(scope, id);
    const ns = o.namespace;
    const opt = o.option ?? "registry";
    check.size(`${opt}.storageSize`, o.storageSize, "500Gi");
    check.pullPrefix(`${opt}.pullPrefix`, o.pullPrefix);
    check.cidrs(`${opt}.allowCidrs`, o.allowCidrs);
    const image = o.image ?? { image: REGISTRY_IMAGE };
    check.image(`${opt}.image.image`, image.image);
    const labels = labelsOf("berth-registry");
    const name = "berth-registry";
    this.url = `https://${name}.${ns}.svc:${REGISTRY_PORT}`;
    this.pullPrefix = o.pullPrefix;

    // No Kubernetes API calls: an account without rules and without a token.
    const account = new ServiceAccountWithRules(this, "account", {
      name,
      namespace: ns,
      labels,
      rules: { clusterRules: [], namespaceRules: [] },
    });
    new ApiObject(this, "statefulset", {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { name, namespace: ns, labels },
      spec: storedStatefulSetSpec(
        name,
        labels,
        podSpec({
          serviceAccountName: account.name,
          kubeApi: false,
          image,
          containers: [
            {
              ...container({
                name: "registry",
                image,
                command: ["registry", "serve", "/etc/distribution/config.yml"],
                env: [
                  { name: "REGISTRY_HTTP_ADDR", value: `:${REGISTRY_PORT}` },
                  { name: "REGISTRY_STORAGE_FILESYSTEM_ROOTDIRECTORY", value: "/var/lib/registry" },
                  // A member's deleted image is deleted here too (api/src/domain/images/privateImages.ts).
                  { name: "REGISTRY_STORAGE_DELETE_ENABLED", value: "true" },
                  { name: "REGISTRY_HTTP_TLS_CERTIFICATE", value: "/tls/tls.crt" },
                  { name: "REGISTRY_HTTP_TLS_KEY", value: "/tls/tls.key" },
                  { name: "REGISTRY_AUTH", value: "htpasswd" },
                  { name: "REGISTRY_AUTH_HTPASSWD_REALM", value: "berth" },
                  { name: "REGISTRY_AUTH_HTPASSWD_PATH", value: "/auth/htpasswd" },
                ],
                ports: [{ name: "https", containerPort: REGISTRY_PORT }],
                resources: o.resources ?? REGISTRY_RESOURCES,
                // `/` answers 200 without credentials; /v2/ asks for them.
                health: { path: "/", port: "https", scheme: "HTTPS" },
                volumeMounts: [
                  { name: "storage", mountPath: "/var/lib/registry" },
                  { name: "tls", mountPath: "/tls", readOnly: true },
                  { name: "auth", mountPath: "/auth", readOnly: true },
                ],
              }),
            },
          ],
          volumes: [
            { name: "tls", secret: { secretName: o.tlsSecret } },
            {
              name: "auth",
              secret: { secretName: o.htpasswdSecret, items: [{ key: "htpasswd", path: "htpasswd" }] },
            },
          ],
        }),
        { size: o.storageSize, storageClass: o.storageClass },
      ),
    });
    service(this, "service", {
      name,
      namespace: ns,
      labels,
      port: { name: "https", port: REGISTRY_PORT },
      type: o.serviceType ?? "ClusterIP",
      loadBalancerSourceRanges: o.allowCidrs,
    });
    ingressPolicy(this, "policy", {
      name,
      namespace: ns,
      labels,
      ingress: [
        { port: REGISTRY_PORT, from: [...o.clientLabels.map(podsLabelled), ...o.allowCidrs.map(addressRange)] },
      ],
    });
  }
}
