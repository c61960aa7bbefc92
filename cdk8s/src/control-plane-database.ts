// The control plane's database option (ControlPlaneOptions.database, control-plane.ts): where DATABASE_URL
// comes from, checked at synth time.
import * as check from "./options.ts";
import { OptionError } from "./options.ts";
import { type Env, fromSecret } from "./pod.ts";
import { IN_CLUSTER_POSTGRES_SECRET, type InClusterPostgresOptions } from "./postgres.ts";

/** Where DATABASE_URL comes from: exactly one of the three. */
export interface DatabaseOptions {
  /** A Secret you manage (a managed Postgres): its key holds the whole `postgres://…` URL. */
  external?: { secretName: string; key?: string };
  /** A CloudNativePG `Cluster` made here (the CloudNativePG operator must be installed). */
  cloudNativePg?: { instances: number; storageSize: string; storageClass?: string };
  /** Postgres as a pod here, from the image cdk8s/src/image/postgres.ts builds (cdk8s/src/postgres.ts). */
  inCluster?: InClusterPostgresOptions;
}

export function databaseEnv(d: DatabaseOptions): Env {
  const set = (["external", "cloudNativePg", "inCluster"] as const).filter((k) => d[k]);
  if (set.length > 1)
    throw new OptionError(
      "database",
      `set one of database.external, cloudNativePg and inCluster, not ${set.join(" and ")}`,
    );
  if (d.inCluster) {
    const secret = check.dnsLabel(
      "database.inCluster.secretName",
      d.inCluster.secretName ?? IN_CLUSTER_POSTGRES_SECRET,
    );
    return fromSecret("DATABASE_URL", secret, "uri");
  }
  if (d.external) {
    check.dnsLabel("database.external.secretName", d.external.secretName);
    return fromSecret("DATABASE_URL", d.external.secretName, d.external.key ?? "url");
  }
  if (d.cloudNativePg) {
    check.count("database.cloudNativePg.instances", d.cloudNativePg.instances, { min: 1, max: 9 });
    check.size("database.cloudNativePg.storageSize", d.cloudNativePg.storageSize, "20Gi");
    // CloudNativePG writes the application user's connection URL into `<cluster>-app`, key `uri`.
    return fromSecret("DATABASE_URL", "berth-postgres-app", "uri");
  }
  throw new OptionError(
    "database",
    "set database.external (a Secret with DATABASE_URL), database.cloudNativePg or database.inCluster",
  );
}
