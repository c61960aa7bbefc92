// Kubeconfig text for a bearer token: what kubectl, client-node and Berth's own clients load.
import { KubeConfig } from "@kubernetes/client-node";
import { stringify } from "yaml";

export interface KubeconfigInput {
  cluster: string;
  server: string;
  caPem: string;
  user: string;
  token: string;
}

export function kubeconfigText(k: KubeconfigInput): string {
  const context = k.user === "admin" ? k.cluster : `${k.user}@${k.cluster}`;
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name: k.cluster,
        cluster: { server: k.server, "certificate-authority-data": Buffer.from(k.caPem).toString("base64") },
      },
    ],
    users: [{ name: k.user, user: { token: k.token } }],
    contexts: [{ name: context, context: { cluster: k.cluster, user: k.user } }],
    "current-context": context,
    preferences: {},
  });
}

/** A client-node KubeConfig from kubeconfig text. */
export function kubeConfigFrom(text: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(text);
  return kc;
}
