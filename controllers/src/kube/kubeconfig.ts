// Where a process finds its cluster: a kubeconfig file (a context of it), or the pod's own service account
// when it runs in the cluster. The result feeds HttpKube.
import { KubeConfig } from "@kubernetes/client-node";

export type KubeSource =
  | { mode: "kubeconfig"; path: string; context?: string | undefined }
  | { mode: "in-cluster"; host: string; port: string | number };

export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

export function loadKubeConfig(source: KubeSource, serviceAccountDir = SERVICE_ACCOUNT_DIR): KubeConfig {
  const kc = new KubeConfig();
  if (source.mode === "kubeconfig") {
    kc.loadFromFile(source.path);
    if (source.context) kc.setCurrentContext(source.context);
    return kc;
  }
  // KUBERNETES_SERVICE_HOST is a bare IPv6 address on IPv6 clusters.
  const host = source.host.includes(":") ? `[${source.host}]` : source.host;
  kc.loadFromClusterAndUser(
    {
      name: "in-cluster",
      server: `https://${host}:${source.port}`,
      caFile: `${serviceAccountDir}/ca.crt`,
      skipTLSVerify: false,
    },
    // The tokenFile provider re-reads the projected token, which the kubelet rotates.
    { name: "in-cluster", authProvider: { name: "tokenFile", config: { tokenFile: `${serviceAccountDir}/token` } } },
  );
  return kc;
}
