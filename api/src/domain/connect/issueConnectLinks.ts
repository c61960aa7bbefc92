// GET /api/v1/sessions/:id/connect: three fresh single-use links on the session's own cluster.

import { insertConnectTokens } from "../../db/operations/connect/insertConnectTokens.ts";
import { purgeConnectTokens } from "../../db/operations/connect/purgeConnectTokens.ts";
import type { NewConnectToken } from "../../db/operations/connect/types.ts";
import { Forbidden, Unavailable } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import type { ConnectDeps } from "./deps.ts";
import { SessionNotRunning } from "./errors.ts";
import { CONNECT_LINKS, type ConnectLinkKind, connectUrl } from "./links.ts";
import {
  CONNECT_TOKEN_DEFAULT_TTL_SECONDS,
  CONNECT_TOKEN_MAX_TTL_SECONDS,
  hashConnectToken,
  newConnectToken,
} from "./token.ts";

export interface ConnectLinks {
  sessionId: string;
  clusterId: string;
  sessionDomain: string;
  links: Record<ConnectLinkKind, string>;
  expiresAt: Date;
}

/** Expired tokens are kept this long (to tell "expired" from "unknown" in a refusal), then purged. */
const KEEP_EXPIRED_MS = 60 * 60 * 1000;

export async function issueConnectLinks(
  deps: ConnectDeps,
  principal: Principal,
  sessionId: string,
): Promise<ConnectLinks> {
  const session = await deps.sessions.forUser(principal, sessionId);
  if (!(await deps.sessions.mayUse(principal.userId, session)))
    throw new Forbidden("only the session's owner may connect to it", { reason: "not_owner" });
  if (session.phase !== "Running" || !session.clusterId) throw new SessionNotRunning(session.id, session.phase);
  const cluster = await deps.clusters.byId(session.clusterId);
  if (!cluster)
    throw new Unavailable(`cluster ${session.clusterId} of session ${session.id} is not registered`, {
      cluster_id: session.clusterId,
    });

  const ttl = Math.min(deps.tokenTtlSeconds ?? CONNECT_TOKEN_DEFAULT_TTL_SECONDS, CONNECT_TOKEN_MAX_TTL_SECONDS);
  const createdAt = deps.clock.now();
  const expiresAt = new Date(createdAt.getTime() + ttl * 1000);
  const links = {} as Record<ConnectLinkKind, string>;
  const rows: NewConnectToken[] = [];
  for (const kind of CONNECT_LINKS) {
    const token = newConnectToken();
    links[kind] = connectUrl(cluster.sessionDomain, session.crName, kind, token);
    rows.push({
      tokenHash: hashConnectToken(token),
      sessionId: session.id,
      crName: session.crName,
      clusterId: cluster.id,
      userId: principal.userId,
      link: kind,
      createdAt,
      expiresAt,
    });
  }
  await insertConnectTokens(deps.db, rows);
  // Housekeeping rides on issuance: bounded, indexed, and needs no extra process.
  await purgeConnectTokens(deps.db, new Date(createdAt.getTime() - KEEP_EXPIRED_MS), 200);
  return { sessionId: session.id, clusterId: cluster.id, sessionDomain: cluster.sessionDomain, links, expiresAt };
}
