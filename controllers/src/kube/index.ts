export * from "./client.ts";
export * from "./informer.ts";
