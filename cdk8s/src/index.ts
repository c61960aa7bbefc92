export { ControlPlane, type ControlPlaneOptions, type DatabaseOptions } from "./control-plane.ts";
export { Crds } from "./crds.ts";
export { ENVIRONMENTS, type Environment, synthEnvironment } from "./environments.ts";
export { GpuCluster, type GpuClusterOptions } from "./gpu-cluster.ts";
export { OptionError } from "./options.ts";
export type { ImageOptions, Resources } from "./pod.ts";
export { grantCount, mergeRules, type RuleList, ServiceAccountWithRules } from "./rbac.ts";
