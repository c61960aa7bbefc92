export * from "./client.ts";
export * from "./informer.ts";
export * from "./kubeconfig.ts";
export * from "./lease.ts";
export * from "./periodic.ts";
