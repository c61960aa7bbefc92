import type { Knex } from "knex";
import type { ConnectClusters, ConnectSessions } from "./ports.ts";

export interface ConnectDeps {
  db: Knex;
  clock: { now(): Date };
  sessions: ConnectSessions;
  clusters: ConnectClusters;
  /** Life of a connect token, 1..60 s (CONNECT_TOKEN_MAX_TTL_SECONDS). */
  tokenTtlSeconds?: number;
}
