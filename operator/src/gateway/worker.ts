// Process entry of one gateway worker (workers.ts forks it; not started by hand). Everything it needs
// comes in the primary's start message: no environment, no files of its own besides the operator token
// (re-read for every verification, as in one process). It stops when told, when signalled, or when the
// primary goes away.
import { pino } from "pino";
import { type RunningGateway, startGateway } from "./gateway.ts";
import { GatewayMetrics } from "./metrics.ts";
import { gatewayOptions } from "./run.ts";
import type { FromWorker, ToWorker } from "./worker-protocol.ts";

let gateway: RunningGateway | undefined;
let stopping = false;
const metrics = new GatewayMetrics();

function tell(m: FromWorker, then?: () => void): void {
  if (process.connected) process.send?.(m, undefined, {}, () => then?.());
  else then?.();
}

function stop(code: number): void {
  if (stopping) return;
  stopping = true;
  // A worker never lingers: whatever close() waits for, the process ends.
  setTimeout(() => process.exit(code === 0 ? 1 : code), 5000).unref();
  (gateway?.close() ?? Promise.resolve()).then(
    () => process.exit(code),
    () => process.exit(1),
  );
}

process.on("message", (m: ToWorker) => {
  if (m.type === "stop") return stop(0);
  if (m.type === "metrics") {
    void metrics.registry.getMetricsAsJSON().then((data) => tell({ type: "metrics", id: m.id, data }));
    return;
  }
  if (m.type !== "start" || gateway || stopping) return;
  const { config } = m.prepared;
  const log = pino({
    level: config.logLevel,
    base: { component: "gateway", cluster: config.clusterId, worker: m.index },
  });
  startGateway(gatewayOptions(m.prepared, { log, port: m.port, reusePort: true, metrics })).then(
    (g) => {
      gateway = g;
      tell({ type: "listening", url: g.url, port: g.port });
    },
    (e: unknown) => {
      tell({ type: "failed", message: (e as Error).message }, () => stop(1));
    },
  );
});
// The primary is gone (exited or killed): nobody supervises this worker any more.
process.on("disconnect", () => stop(0));
for (const sig of ["SIGTERM", "SIGINT"] as const) process.on(sig, () => stop(0));
