// The messages between the gateway's primary (workers.ts) and a worker (worker.ts), over IPC.
import type { MetricsJson } from "./metrics.ts";
import type { PreparedGateway } from "./serving.ts";

/** Primary -> worker. */
export type ToWorker =
  | { type: "start"; prepared: PreparedGateway; port: number; index: number }
  | { type: "stop" }
  | { type: "metrics"; id: number };
/** Worker -> primary. */
export type FromWorker =
  | { type: "listening"; url: string; port: number }
  | { type: "failed"; message: string }
  | { type: "metrics"; id: number; data: MetricsJson };
