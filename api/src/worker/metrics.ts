// The worker's own metrics, served on its status listener (worker-main.ts, and `npm start`'s worker in
// e2e/src/start/services.ts) and scraped by the metrics server (docs/dev/monitoring.md).
import { collectDefaultMetrics, Gauge, Registry } from "prom-client";

/** The q-quantile (0..1) of `xs` by nearest rank; undefined for none. */
function quantile(xs: readonly number[], q: number): number | undefined {
  if (xs.length === 0) return undefined;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** Process metrics and whether this replica holds the lease (labelled with its identity once it runs). */
export function workerMetrics(
  worker: () =>
    | { isLeader(): boolean; controller?(): { placementPassMs(): readonly number[] } | undefined }
    | undefined,
): Registry {
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
  // Quantiles over the last 1,000 passes, only while this replica leads: how long the queue waits for a
  // pass grows with the fleet (docs/dev/fleet-scale.md).
  new Gauge({
    name: "berth_worker_placement_pass_seconds",
    help: "Placement pass duration over the last 1,000 passes of the leading replica, by quantile",
    labelNames: ["quantile"],
    registers: [registry],
    collect() {
      this.reset();
      const ms = worker()?.controller?.()?.placementPassMs() ?? [];
      for (const q of [0.5, 0.99]) {
        const v = quantile(ms, q);
        if (v !== undefined) this.set({ quantile: String(q) }, v / 1000);
      }
    },
  });
  return registry;
}
