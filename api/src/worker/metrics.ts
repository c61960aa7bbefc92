// The worker's own metrics, served on its status listener (worker-main.ts, and `npm start`'s worker in
// e2e/src/start/services.ts) and scraped by the metrics server (docs/dev/monitoring.md).
import { collectDefaultMetrics, Gauge, Registry } from "prom-client";

/** Process metrics and whether this replica holds the lease (labelled with its identity once it runs). */
export function workerMetrics(worker: () => { isLeader(): boolean } | undefined): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  new Gauge({
    name: "berth_worker_leader",
    help: "1 while this worker replica holds the lease (and so runs the session controllers), else 0",
    registers: [registry],
    collect() {
      this.set(worker()?.isLeader() ? 1 : 0);
    },
  });
  return registry;
}
