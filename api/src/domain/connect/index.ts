export { type CheckGrantInput, checkConnectGrant } from "./checkConnectGrant.ts";
export type { ConnectDeps } from "./deps.ts";
export {
  CONNECT_REFUSAL_REASONS,
  type ConnectRefusalReason,
  ConnectRefused,
  SessionGone,
  SessionNotRunning,
} from "./errors.ts";
export { type ConnectLinks, issueConnectLinks } from "./issueConnectLinks.ts";
export { CONNECT_LINKS, type ConnectLinkKind, connectPath, connectUrl } from "./links.ts";
export type { ConnectCluster, ConnectClusters, ConnectSession, ConnectSessions } from "./ports.ts";
export {
  CONNECT_TOKEN_MAX_TTL_SECONDS,
  hashConnectToken,
  isConnectTokenShaped,
  newConnectToken,
  redactToken,
} from "./token.ts";
export { type ConnectGrant, type VerifyTokenInput, verifyConnectToken } from "./verifyConnectToken.ts";
