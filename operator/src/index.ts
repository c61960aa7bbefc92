// @berth/operator: the GPU-cluster operator, usable in-process (tests, `npm start`) or as `node main.ts`.
export { type BackoffPolicy, backoffDelay, defaultBackoff } from "./backoff.ts";
export { type Clock, systemClock } from "./clock.ts";
export {
  ConfigError,
  configFromEnv,
  ENV,
  type OperatorConfig,
  type OperatorConfigInput,
  OperatorConfigSchema,
  parseConfig,
} from "./config.ts";
export { InternalClient, type Outcome, retryDelay } from "./controlplane/client.ts";
export {
  computeInventory,
  inventoryFingerprint,
  type NodeLike,
  type PodLike,
  podGpus,
} from "./inventory/compute.ts";
export { INVENTORY_PATH } from "./inventory/reporter.ts";
export { type RunningOperator, type StartOperatorOptions, startOperator } from "./operator.ts";
export {
  GATEWAY_RBAC,
  gatewayRbac,
  OPERATOR_RBAC,
  type OperatorRbac,
  type OperatorRbacOptions,
  operatorRbac,
} from "./rbac.ts";
