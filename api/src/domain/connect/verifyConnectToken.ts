// GET /internal/connect/verify, redeem mode: the gateway of `clusterId` presents a token it found in
// `svc_cnx` on a request for /proxy/{cr}/…; the answer is what its cookie needs.

import { findConnectToken } from "../../db/operations/connect/findConnectToken.ts";
import { redeemConnectToken } from "../../db/operations/connect/redeemConnectToken.ts";
import type { ConnectDeps } from "./deps.ts";
import { ConnectRefused, SessionGone, SessionNotRunning } from "./errors.ts";
import { hashConnectToken, isConnectTokenShaped } from "./token.ts";

export interface ConnectGrant {
  sessionId: string;
  crName: string;
  clusterId: string;
  userId: string;
  phase: string;
}

export interface VerifyTokenInput {
  /** From the operator token (sub operator:<cluster_id>), never from the request body. */
  clusterId: string;
  crName: string;
  token: string;
}

export async function verifyConnectToken(deps: ConnectDeps, input: VerifyTokenInput): Promise<ConnectGrant> {
  if (!isConnectTokenShaped(input.token)) throw new ConnectRefused("token_invalid", "this is not a connect token");
  const tokenHash = hashConnectToken(input.token);
  const now = deps.clock.now();
  const row = await redeemConnectToken(deps.db, { tokenHash, clusterId: input.clusterId, crName: input.crName, now });
  if (!row) throw await explainRefusal(deps, tokenHash, input, now);

  // Redeemed: the token is spent whatever follows. The session is checked after, not before, so a
  // paused session's page costs one link, and a race with pause cannot leave a usable token behind.
  const session = await deps.sessions.byId(row.session_id);
  if (!session) throw new SessionGone(row.session_id);
  if (session.clusterId !== input.clusterId || session.crName !== input.crName) {
    throw new ConnectRefused(
      "session_moved",
      "the session no longer runs behind this gateway; open it again from the console",
    );
  }
  if (session.phase !== "Running") throw new SessionNotRunning(session.id, session.phase);
  return {
    sessionId: session.id,
    crName: session.crName,
    clusterId: input.clusterId,
    userId: row.user_id,
    phase: session.phase,
  };
}

async function explainRefusal(
  deps: ConnectDeps,
  tokenHash: Buffer,
  input: VerifyTokenInput,
  now: Date,
): Promise<ConnectRefused> {
  const t = await findConnectToken(deps.db, tokenHash);
  if (!t)
    return new ConnectRefused(
      "token_unknown",
      "this connect link is not valid; open the session again from the console",
    );
  if (t.cluster_id !== input.clusterId)
    return new ConnectRefused("other_cluster", "this connect link belongs to another cluster's gateway");
  if (t.cr_name !== input.crName)
    return new ConnectRefused("other_session", "this connect link was issued for another session");
  if (t.redeemed_at)
    return new ConnectRefused(
      "token_used",
      "this connect link has already been used; open the session again from the console",
    );
  if (t.expires_at.getTime() <= now.getTime())
    return new ConnectRefused(
      "token_expired",
      "this connect link has expired; open the session again from the console",
    );
  // Redeemable a moment ago, gone now: another request won the race.
  return new ConnectRefused(
    "token_used",
    "this connect link has already been used; open the session again from the console",
  );
}
