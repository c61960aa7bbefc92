// What connecting needs from the sessions and clusters domains, as small interfaces. The sessions domain
// provides the real implementation (sessionsForConnect in ./adapters.ts once it lands); tests inject
// in-memory ones. Keeping the surface this small is what lets connect, logs and usage be tested without
// the whole session lifecycle.
import type { Principal } from "../identity/principal.ts";

export interface ConnectSession {
  /** The public id of the session (the one in /api/v1/sessions/:id). */
  id: string;
  /** The Session resource's name: `{cr}` in /proxy/{cr}/… */
  crName: string;
  /** Where it runs now; undefined while not placed. */
  clusterId?: string;
  /** Session phase (`SessionPhase` in crds; docs/dev/sessions.md): Running, Paused, … */
  phase: string;
  ownerId: string;
  organizationId: string;
  /** The pod on the GPU cluster, for logs; undefined while there is none. */
  podName?: string;
  namespace?: string;
}

export interface ConnectSessions {
  /** The session as `principal` may use it (connect, logs, usage); throws NotFound when it may not. */
  forUser(principal: Principal, sessionId: string): Promise<ConnectSession>;
  /** The session by id with no caller check (the verify route; the token already names the user). */
  byId(sessionId: string): Promise<ConnectSession | undefined>;
  /** Whether the user may connect to the session (links, and the gateway's cookie renewal). */
  mayUse(userId: string, session: ConnectSession): Promise<boolean>;
}

export interface ConnectCluster {
  id: string;
  /** Hostname[:port] of the cluster's gateway. */
  sessionDomain: string;
}

export interface ConnectClusters {
  byId(clusterId: string): Promise<ConnectCluster | undefined>;
}
