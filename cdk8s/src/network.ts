// How a Berth component that listens is reached: a Service in front of its pods, and an ingress-only
// NetworkPolicy that says who may connect on which port. Every listener is charted through these two, so a
// new one cannot forget its policy's shape (TCP only, ports by number: a policy names the pod's port, not
// the Service's).
import { ApiObject } from "cdk8s";
import type { Construct } from "constructs";

type Labels = Record<string, string>;

/** Who a policy admits: pods by label, or an address range (for traffic from outside the cluster). */
export type Peer = { podSelector: { matchLabels: Labels } } | { ipBlock: { cidr: string } };
export const podsLabelled = (labels: Labels): Peer => ({ podSelector: { matchLabels: labels } });
export const addressRange = (cidr: string): Peer => ({ ipBlock: { cidr } });

export interface ServiceOptions {
  name: string;
  namespace: string;
  labels: Labels;
  annotations?: Record<string, string>;
  /** The port clients use; it forwards to the container port of the same name. */
  port: { name: string; port: number };
  /** Left out: the cluster's default (ClusterIP). */
  type?: "ClusterIP" | "LoadBalancer";
  /**
   * For a LoadBalancer: the ranges its cloud firewall admits. Either way a LoadBalancer keeps the client's
   * address (`externalTrafficPolicy: Local`), which the policy's ranges and the API's own gate check.
   */
  loadBalancerSourceRanges?: string[];
}

/** A Service selecting the pods that carry `labels`. */
export function service(scope: Construct, id: string, o: ServiceOptions): ApiObject {
  const lb = o.type === "LoadBalancer";
  return new ApiObject(scope, id, {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: o.name,
      namespace: o.namespace,
      labels: o.labels,
      ...(o.annotations ? { annotations: o.annotations } : {}),
    },
    spec: {
      ...(o.type ? { type: o.type } : {}),
      selector: o.labels,
      ports: [{ name: o.port.name, port: o.port.port, targetPort: o.port.name, protocol: "TCP" }],
      ...(lb ? { externalTrafficPolicy: "Local" } : {}),
      ...(lb && o.loadBalancerSourceRanges ? { loadBalancerSourceRanges: o.loadBalancerSourceRanges } : {}),
    },
  });
}

/** One port of the pods and who may reach it; no `from`: anyone. */
export interface IngressRule {
  port: number;
  from?: Peer[];
}

/** An ingress-only policy on the pods that carry `labels`: every port and peer not listed is refused. */
export function ingressPolicy(
  scope: Construct,
  id: string,
  o: { name: string; namespace: string; labels: Labels; ingress: IngressRule[] },
): ApiObject {
  return new ApiObject(scope, id, {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: { name: o.name, namespace: o.namespace, labels: o.labels },
    spec: {
      podSelector: { matchLabels: o.labels },
      policyTypes: ["Ingress"],
      ingress: o.ingress.map((r) => ({
        ...(r.from ? { from: r.from } : {}),
        ports: [{ protocol: "TCP", port: r.port }],
      })),
    },
  });
}
