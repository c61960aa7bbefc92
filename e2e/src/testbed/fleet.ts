// startFleet: every cluster of a description started in parallel (a 1+2 fleet is up in well under 20 s
// with cached binaries), or none: when one component fails, everything already started is stopped and
// the error carries the last lines of that component's log.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findTestbedBinaries } from "./binaries.ts";
import { ComponentStartError, startCluster } from "./cluster.ts";
import { removeIfOrphaned } from "./process.ts";
import { startRealNode } from "./real-node/start.ts";
import type { Cluster, ComponentTiming, Fleet, FleetDescription, RealNode, StartFleetOptions } from "./types.ts";

const DEFAULT_POD_LOG = ["berth test bed: container started", "serving on 0.0.0.0:8888", "ready"];

export async function startFleet(description: FleetDescription, opts: StartFleetOptions = {}): Promise<Fleet> {
  validate(description);
  const t0 = performance.now();
  const log = opts.log ?? (() => {});
  const binDir = opts.binDir ?? findTestbedBinaries();
  const temporary = opts.dataDir === undefined;
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), "berth-fleet-"));
  mkdirSync(dataDir, { recursive: true });
  const removeData = temporary && !opts.keepData;
  removeIfOrphaned(dataDir, removeData);

  const abort = new AbortController();
  const onCallerAbort = () => abort.abort();
  opts.signal?.addEventListener("abort", onCallerAbort, { once: true });
  if (opts.signal?.aborted) abort.abort();
  const results = await Promise.allSettled(
    description.clusters.map(async (desc) => {
      const started = performance.now();
      try {
        const cluster = await startCluster({
          desc,
          binDir,
          dir: join(dataDir, desc.name),
          t0,
          log,
          podLogLines: opts.podLogLines ?? DEFAULT_POD_LOG,
          stopGraceMs: opts.stopGraceMs ?? 5000,
          readyTimeoutMs: opts.readyTimeoutMs ?? 120_000,
          signal: abort.signal,
        });
        const total: ComponentTiming = {
          cluster: desc.name,
          component: "cluster",
          startedAtMs: Math.round(started - t0),
          durationMs: Math.round(performance.now() - started),
        };
        log(`[testbed] ${desc.name} ready in ${(total.durationMs / 1000).toFixed(1)}s (${cluster.server})`);
        return { cluster, total };
      } catch (err) {
        abort.abort(); // the others stop waiting and tear down
        throw err;
      }
    }),
  );

  opts.signal?.removeEventListener("abort", onCallerAbort);
  const up = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
  const failures = results.flatMap((r) => (r.status === "rejected" ? [r.reason as unknown] : []));
  if (failures.length > 0 || opts.signal?.aborted) {
    await Promise.all(up.map((u) => u.cluster.stop()));
    if (removeData) rmSync(dataDir, { recursive: true, force: true });
    removeIfOrphaned(dataDir, false);
    // The component that died, not a cluster that was merely aborted because of it.
    throw failures.find((f) => f instanceof ComponentStartError) ?? failures[0] ?? new Error("fleet start aborted");
  }

  const clusters: Cluster[] = up.map((u) => u.cluster);
  // Real nodes join after their clusters are up, one at a time (a host runs one: real-node/layout.ts).
  const realNodes: RealNode[] = [];
  if (opts.realNodes) {
    try {
      for (const desc of description.clusters) {
        if (!desc.realNode) continue;
        const cluster = clusters.find((c) => c.name === desc.name);
        if (!cluster) continue;
        realNodes.push(
          await startRealNode({
            cluster,
            ...desc.realNode,
            ...(opts.realNodeRegistries ? { registries: opts.realNodeRegistries } : {}),
            log,
            readyTimeoutMs: opts.readyTimeoutMs ?? 120_000,
          }),
        );
      }
    } catch (err) {
      await Promise.all(realNodes.map((n) => n.stop()));
      await Promise.all(clusters.map((c) => c.stop()));
      if (removeData) rmSync(dataDir, { recursive: true, force: true });
      removeIfOrphaned(dataDir, false);
      throw err;
    }
  }
  const timings = [...up.flatMap((u) => [...u.cluster.timings, u.total])].sort(
    (a, b) => a.startedAtMs - b.startedAtMs || a.durationMs - b.durationMs,
  );
  const startMs = Math.round(performance.now() - t0);
  log(`[testbed] fleet of ${clusters.length} ready in ${(startMs / 1000).toFixed(1)}s`);

  let stopping: Promise<void> | undefined;
  return {
    clusters,
    cluster: (name) => {
      const c = clusters.find((x) => x.name === name);
      if (!c) throw new Error(`no cluster "${name}" in this fleet (${clusters.map((x) => x.name).join(", ")})`);
      return c;
    },
    dataDir,
    timings,
    startMs,
    realNodes,
    pids: () => [...clusters.flatMap((c) => c.pids()), ...realNodes.flatMap((n) => n.pids())],
    stop: () => {
      stopping ??= (async () => {
        // The node first: its teardown deletes its pods and Node through the cluster's apiserver.
        await Promise.all(realNodes.map((n) => n.stop()));
        await Promise.all(clusters.map((c) => c.stop()));
        if (removeData) rmSync(dataDir, { recursive: true, force: true });
        removeIfOrphaned(dataDir, false);
      })();
      return stopping;
    },
  };
}

function validate(d: FleetDescription): void {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const c of d.clusters) {
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(c.name)) problems.push(`cluster name "${c.name}" is not a DNS label`);
    if (seen.has(c.name)) problems.push(`cluster "${c.name}" appears twice`);
    seen.add(c.name);
    if (c.kind === "management" && (c.nodes?.length || c.gpuRuntimeClass || c.gpuDevicePlugin || c.realNode)) {
      problems.push(
        `management cluster "${c.name}" cannot have GPU nodes, a real node, runtime class or device plugin`,
      );
    }
    for (const n of c.nodes ?? []) {
      if (!Number.isInteger(n.gpuCount) || n.gpuCount < 0)
        problems.push(`node "${n.name}": gpuCount must be a whole number`);
    }
  }
  if (d.clusters.length === 0) problems.push("a fleet needs at least one cluster");
  if (problems.length > 0) throw new Error(`invalid fleet description:\n- ${problems.join("\n- ")}`);
}

/** A plain table of start timings: one line per component, slowest visible. */
export function formatTimings(timings: readonly ComponentTiming[]): string {
  const rows = timings.map((t) => [
    t.cluster,
    t.component,
    `+${(t.startedAtMs / 1000).toFixed(1)}s`,
    `${(t.durationMs / 1000).toFixed(1)}s`,
  ]);
  return table(["cluster", "component", "spawned at", "ready after"], rows);
}

export function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return [line(head), ...rows.map(line)].join("\n");
}
