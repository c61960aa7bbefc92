// `database.inCluster`: Postgres as a pod of the control plane's namespace, from the image
// cdk8s/src/image/postgres.ts builds out of Debian's packages. For an install with no managed database and
// no CloudNativePG operator (the bed's, `npm run bed:install`): one instance, no failover, no backups of
// its own (docs/deploy.md, "Back up", applies). Its Secret is yours: `password` (the `berth` role's, set
// at the first start) and `uri`, the API's and worker's DATABASE_URL with that password.
import { ApiObject } from "cdk8s";
import { Construct } from "constructs";
import { POSTGRES_PORT as PORT, POSTGRES_VOLUME } from "./image/postgres.ts";
import { ingressPolicy, podsLabelled, service } from "./network.ts";
import * as check from "./options.ts";
import {
  container,
  fromSecret,
  type ImageOptions,
  labelsOf,
  podSpec,
  type Resources,
  storedStatefulSetSpec,
} from "./pod.ts";

export interface InClusterPostgresOptions {
  /** The image of cdk8s/src/image/postgres.ts, pushed where the nodes pull. */
  image: ImageOptions;
  /** Secret with `password` and `uri`. Default `berth-postgres-app` (CloudNativePG's name for it). */
  secretName?: string;
  /** The data volume's size; unset, an emptyDir: the data lives as long as the pod (a test bed only). */
  storageSize?: string;
  storageClass?: string;
  resources?: Resources;
}

export const IN_CLUSTER_POSTGRES_SECRET = "berth-postgres-app";
const RESOURCES: Resources = { requests: { cpu: "100m", memory: "256Mi" }, limits: { memory: "1Gi" } };

export class InClusterPostgres extends Construct {
  readonly secretName: string;
  constructor(
    scope: Construct,
    id: string,
    o: InClusterPostgresOptions & { namespace: string; clients: Record<string, string>[] },
  ) {
    super(scope, id);
    const ns = o.namespace;
    check.image("database.inCluster.image.image", o.image.image);
    this.secretName = check.dnsLabel("database.inCluster.secretName", o.secretName ?? IN_CLUSTER_POSTGRES_SECRET);
    if (o.storageSize !== undefined) check.size("database.inCluster.storageSize", o.storageSize, "20Gi");
    const name = "berth-postgres";
    const labels = labelsOf(name);
    const podBase = podSpec({
      serviceAccountName: name,
      kubeApi: false,
      image: o.image,
      containers: [
        container({
          name: "postgres",
          image: o.image,
          command: ["/usr/local/bin/berth-postgres"],
          env: [fromSecret("POSTGRES_PASSWORD", this.secretName, "password")],
          ports: [{ name: "postgres", containerPort: PORT }],
          resources: o.resources ?? RESOURCES,
          // The server listens only once the first start has made the cluster.
          health: { tcpPort: "postgres" },
          volumeMounts: [{ name: "storage", mountPath: POSTGRES_VOLUME }],
          // Postgres takes SIGTERM as a smart shutdown, waiting for every client to leave: the API's and the
          // worker's pools never do, so a restart sat out the 30 s grace period (seen in an upgrade on the
          // bed). SIGINT is its fast shutdown: clients are cut, and they reconnect to the new pod.
          preStop: ["/bin/sh", "-c", "kill -INT 1"],
        }),
      ],
      volumes: o.storageSize ? [] : [{ name: "storage", emptyDir: {} }],
    });
    // The kubelet gives a volume to fsGroup once, when its root does not match: a recursive pass at every
    // start would leave the data folder group-writable, which Postgres refuses to start on.
    const pod = { ...podBase, securityContext: { ...podBase.securityContext, fsGroupChangePolicy: "OnRootMismatch" } };
    new ApiObject(this, "account", {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name, namespace: ns, labels },
      automountServiceAccountToken: false,
    });
    const spec = o.storageSize
      ? storedStatefulSetSpec(name, labels, pod, { size: o.storageSize, storageClass: o.storageClass })
      : {
          serviceName: name,
          replicas: 1,
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: pod },
        };
    new ApiObject(this, "statefulset", {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { name, namespace: ns, labels },
      spec,
    });
    service(this, "service", { name, namespace: ns, labels, port: { name: "postgres", port: PORT } });
    // The API and the worker alone.
    ingressPolicy(this, "policy", {
      name,
      namespace: ns,
      labels,
      ingress: [{ port: PORT, from: o.clients.map(podsLabelled) }],
    });
  }
}
