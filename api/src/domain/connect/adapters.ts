// The real ports of connecting, built from the API's Deps. Clusters come from the `clusters` table
// (session_domain is kept there by registration and PATCH). Sessions come from the sessions domain.

import { findClusterById } from "../../db/operations/clusters/findClusterById.ts";
import { findSessionById } from "../../db/operations/sessions/findSessionById.ts";
import type { SessionRow } from "../../db/operations/sessions/types.ts";
import { viewFromResource } from "../../db/operations/sessions/view.ts";
import type { Deps } from "../../deps.ts";
import { NotFound } from "../../errors.ts";
import { DEFAULT_TARGET_NAMESPACES } from "../../rbac.ts";
import { loadPrincipal } from "../identity/loadPrincipal.ts";
import { readResource } from "../sessions/lookup.ts";
import { canSeeSession } from "../sessions/visibility.ts";
import type { ConnectDeps } from "./deps.ts";
import type { ConnectClusters, ConnectSession, ConnectSessions } from "./ports.ts";
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

/**
 * Sessions from their history rows (`sessions`, kept current by the sessions domain from the Session
 * resource's status). On the GPU cluster the pod is named after the session's resource (the mirror and
 * its pod carry the management Session's name) in the cluster's sessions namespace.
 *
 * Who may do what: logs and usage follow the sessions domain's visibility (owner, the organization's and
 * project's admins, super_admin). Connecting is the owner's alone, while a member of the session's
 * organization: a connect link opens the user's notebook and files as that user, which an
 * administrator's role does not make theirs to do.
 */
export function sessionsForConnect(deps: Deps): ConnectSessions {
  const namespace = deps.clusters?.options.targetNamespaces.sessions ?? DEFAULT_TARGET_NAMESPACES.sessions;
  const toPort = (row: SessionRow): ConnectSession => ({
    id: row.id,
    crName: row.cr_name,
    phase: row.phase,
    ownerId: row.owner_id,
    organizationId: row.organization_id,
    ...(row.cluster_id ? { clusterId: row.cluster_id, podName: row.cr_name, namespace } : {}),
  });
  // The phase and cluster as GET /sessions/{id} shows them: the Session resource's status, which a report
  // makes Running before the row follows. Read from the row alone, a session the API had just called
  // Running was refused a link (409 session_not_running, seen under load). The row answers when the
  // management cluster does not.
  const current = async (row: SessionRow): Promise<SessionRow> => {
    const cr = await readResource(deps, row).catch(() => undefined);
    if (!cr) return row;
    const v = viewFromResource(row, cr);
    return { ...row, phase: v.phase, cluster_id: v.clusterId ?? row.cluster_id };
  };
  return {
    async forUser(principal, sessionId) {
      const row = await findSessionById(deps.db, sessionId);
      if (!row || !canSeeSession(principal, row)) throw new NotFound("session", sessionId);
      return toPort(await current(row));
    },
    async byId(sessionId) {
      const row = await findSessionById(deps.db, sessionId);
      return row ? toPort(await current(row)) : undefined;
    },
    async mayUse(userId, session) {
      // The owner, while still a member of the session's organization (or a super_admin, who may own
      // sessions in any organization), with an account that is not disabled.
      if (session.ownerId !== userId) return false;
      const rec = await loadPrincipal(deps.db, userId);
      if (!rec || rec.disabled) return false;
      return (
        rec.principal.isSuperAdmin || rec.principal.memberships.some((m) => m.organizationId === session.organizationId)
      );
    },
  };
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
