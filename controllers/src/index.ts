// @berth/controllers: the session reconcilers. Management side (placement, lifecycle, dispatch: the
// worker) and GPU-cluster side (mirror → pod, network policy, the gateway's routes: run by the operator). Free of
// process wiring (callers inject clients, stores and clocks) but for what every process shares: its status
// listener and its entry point's exits and signals (status-server.ts, process-entry.ts).

export * from "./builds/controller.ts";
export * from "./builds/manifests.ts";
export * from "./fairshare/eta.ts";
export * from "./fairshare/eta-types.ts";
export * from "./fairshare/pass.ts";
export * from "./fairshare/reclaim.ts";
export * from "./fairshare/shares.ts";
export * from "./fairshare/types.ts";
export * from "./fairshare/usage.ts";
export * from "./mirror/controller.ts";
export * from "./mirror/manifests.ts";
export * from "./mirror/plan.ts";
export * from "./mirror/policy-plan.ts";
export * from "./mirror/routes.ts";
export * from "./mirror/usage.ts";
export * from "./placement/capacity.ts";
export * from "./placement/cards.ts";
export * from "./placement/constraints.ts";
export * from "./placement/plan.ts";
export * from "./placement/types.ts";
export * from "./process-entry.ts";
export { holdsVolumes, idleClaims } from "./sessions/claims.ts";
export * from "./sessions/controller.ts";
export * from "./sessions/lifecycle.ts";
export * from "./sessions/store.ts";
export * from "./status-server.ts";
export * from "./worker.ts";
