// @berth/crds: the one source of resource shapes. Imports nothing of ours.
export * from "./conditions.ts";
export * from "./events.ts";
export * from "./fields.ts";
export * from "./gpu-sharing.ts";
export * from "./kind.ts";
export * from "./kinds/index.ts";
export * from "./mig.ts";
export * from "./names.ts";
export * from "./paths.ts";
export * from "./rbac.ts";
