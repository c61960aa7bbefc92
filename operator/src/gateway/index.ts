// The session gateway (one per GPU cluster). `startGateway` for tests and `npm start`; `runGateway` from a
// parsed configuration (one process, or workers sharing the port: workers.ts); main.ts is the process entry.

export { ActivityTracker } from "./activity.ts";
export {
  type GatewayConfig,
  GatewayConfigError,
  gatewayConfigFromEnv,
  parseCookieKeys,
  parseUpstreamTable,
} from "./config.ts";
export { COOKIE_NAME, signCookie } from "./cookie.ts";
export { type GatewayOptions, type RunningGateway, startGateway } from "./gateway.ts";
export { GatewayMetrics, startStatusServer } from "./metrics.ts";
export { kubePodRunning, kubePodUpstreams, type PodGateOptions, type PodRouteOptions } from "./podGate.ts";
export { prepareGateway, runGateway } from "./run.ts";
export { type CertificatePair, selfSignedCertificate } from "./selfSigned.ts";
export type { PreparedGateway, ServingGateway } from "./serving.ts";
export {
  addressMatcher,
  gatedUpstreams,
  parseHostPort,
  type RouteFeedOptions,
  RouteFeedUpstreams,
  StaticUpstreams,
  type Upstream,
  type UpstreamResolver,
} from "./upstream.ts";
export { type ConnectVerifier, type Grant, httpVerifier, type Refusal, type VerifyOutcome } from "./verifier.ts";
