import type { ConnectLinks } from "../../domain/connect/issueConnectLinks.ts";
import type { ConnectGrant } from "../../domain/connect/verifyConnectToken.ts";

export function presentConnectLinks(l: ConnectLinks) {
  return {
    session_id: l.sessionId,
    cluster_id: l.clusterId,
    session_domain: l.sessionDomain,
    links: { lab: l.links.lab, terminal: l.links.terminal, code: l.links.code },
    expires_at: l.expiresAt.toISOString(),
  };
}

export function presentGrant(g: ConnectGrant) {
  return { session_id: g.sessionId, cr: g.crName, cluster_id: g.clusterId, user_id: g.userId, phase: g.phase };
}
