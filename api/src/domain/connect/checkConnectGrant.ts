// GET /internal/connect/verify, check mode: the gateway already holds a cookie for (session, user) and
// asks whether it may renew it, or why the session's upstream is not answering (paused? gone?).
import type { ConnectDeps } from "./deps.ts";
import { ConnectRefused, SessionGone, SessionNotRunning } from "./errors.ts";
import type { ConnectGrant } from "./verifyConnectToken.ts";

export interface CheckGrantInput {
  clusterId: string;
  crName: string;
  sessionId: string;
  userId: string;
}

export async function checkConnectGrant(deps: ConnectDeps, input: CheckGrantInput): Promise<ConnectGrant> {
  const session = await deps.sessions.byId(input.sessionId);
  if (!session) throw new SessionGone(input.sessionId);
  if (session.crName !== input.crName)
    throw new ConnectRefused("other_session", "this cookie was issued for another session");
  if (session.clusterId !== input.clusterId)
    throw new ConnectRefused(
      "session_moved",
      "the session no longer runs behind this gateway; open it again from the console",
    );
  if (!(await deps.sessions.mayUse(input.userId, session)))
    throw new ConnectRefused("not_allowed", "you may no longer use this session");
  if (session.phase !== "Running") throw new SessionNotRunning(session.id, session.phase);
  return {
    sessionId: session.id,
    crName: session.crName,
    clusterId: input.clusterId,
    userId: input.userId,
    phase: session.phase,
  };
}
