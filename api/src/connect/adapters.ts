// The real ports of connecting, built from the API's Deps. Clusters come from the `clusters` table
// (session_domain is kept there by registration and PATCH). Sessions come from the sessions domain.
import { findClusterById } from "../db/operations/clusters/findClusterById.ts";
import type { Deps } from "../deps.ts";
import { Unavailable } from "../errors.ts";
import type { ConnectDeps } from "./deps.ts";
import type { ConnectClusters, ConnectSessions } from "./ports.ts";
import { CONNECT_TOKEN_DEFAULT_TTL_SECONDS } from "./token.ts";

export function dbClusters(deps: Pick<Deps, "db">): ConnectClusters {
  return {
    async byId(clusterId) {
      const row = await findClusterById(deps.db, clusterId);
      if (!row || row.deregistered_at) return undefined;
      return { id: row.id, sessionDomain: row.session_domain };
    },
  };
}

/** Until the sessions domain is wired in, every session question is "unavailable", never a guess. */
const notWired: ConnectSessions = {
  forUser: async () => {
    throw new Unavailable("sessions are not available in this process");
  },
  byId: async () => {
    throw new Unavailable("sessions are not available in this process");
  },
  mayUse: async () => false,
};

export function sessionsForConnect(_deps: Deps): ConnectSessions {
  return notWired;
}

/** How routes get their ports; tests pass their own. */
export type ConnectPortsOf = (deps: Deps) => ConnectDeps;

export const connectDepsOf: ConnectPortsOf = (deps) => ({
  db: deps.db,
  clock: deps.clock,
  clusters: dbClusters(deps),
  sessions: sessionsForConnect(deps),
  tokenTtlSeconds: CONNECT_TOKEN_DEFAULT_TTL_SECONDS,
});
