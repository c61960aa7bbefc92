// What every handler and domain function gets: built once in main.ts (or by a test), then injected.
import type { KubeConfig } from "@kubernetes/client-node";
import type { Logger } from "pino";
import type { Config } from "./config.ts";
import type { Db } from "./db/knex.ts";
import type { ClustersRuntime } from "./domain/clusters/runtime.ts";
import type { Metrics } from "./http/metrics.ts";
import type { Authenticator } from "./http/principal.ts";

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export interface Deps {
  config: Config;
  db: Db;
  log: Logger;
  clock: Clock;
  /** Bearer token -> Principal (api/src/domain/identity/). */
  authenticate: Authenticator;
  metrics: Metrics;
  /** Management cluster access (catalog custom resources); absent when BERTH_KUBECONFIG is unset. */
  kubeConfig?: KubeConfig;
  /** Cluster registration, operator tokens and the internal plane (api/src/domain/clusters/runtime.ts); absent without a management cluster. */
  clusters?: ClustersRuntime;
}
