// `npm start` (after scripts/ensure-install.sh has installed dependencies): Berth's local fleet.
//
// Steps, in order:
//   1. Take the single-instance lock, .data/berth.pid: a second `npm start` says "Berth is already running
//      (pid N)" and exits 1 instead of fighting over ports and data.
//   2. Make sure the test bed's binaries exist: e2e/testbed/build-binaries.sh answers at once from its
//      cache, or builds them (about 9 minutes cold; progress on stderr).
//   3. Start the clusters of e2e/fleet.config.ts in parallel, data under .data/fleet (fresh each run: the
//      clusters are disposable, state that must survive belongs to Postgres), and write each admin
//      kubeconfig to .data/kubeconfig-<cluster>.yaml. Where the machine allows it (canRunRealNode: root,
//      containerd present or installable) the real node the fleet names joins its cluster, and one line
//      says so; otherwise one line says why not and the fleet is kwok alone. BERTH_REAL_NODE=0 leaves it out.
//   4. Start the SERVICES, in order (see below).
//   5. Print what runs where, with per-component start times; wait for Ctrl-C or SIGTERM; stop services
//      in reverse order, then the fleet; exit 0. A second Ctrl-C while stopping kills everything at once.
//
// ── EXTENSION POINT ──────────────────────────────────────────────────────────────────────────────────
// Postgres, the API, the worker, the operators, gateways and the console join `npm start` by appending a
// `Service` to SERVICES (search for "SERVICES"). A service:
//   - `start(ctx)` gets the running fleet, the repo root, the .data folder, a logger, and what earlier
//     services published (`ctx.published`, e.g. `DATABASE_URL` from Postgres for the API after it);
//   - returns `{ endpoints, publish, stop }`: endpoints are printed in the "what runs where" table,
//     `publish` is merged into `ctx.published` for later services, `stop()` is awaited on shutdown;
//   - fails by throwing: everything started so far is stopped and `npm start` exits 1.
// Keep each service's code in its own workspace (e.g. the Postgres starter in api/src/db) and only wire
// it here. Processes a service spawns must be stopped by its `stop()`; prefer the test bed's
// spawnManaged (e2e/src/testbed/process.ts), which also kills them if this process dies.
// ─────────────────────────────────────────────────────────────────────────────────────────────────────
import { spawn } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fleetConfig } from "../../fleet.config.ts";
import { findNodeBinaries } from "../testbed/binaries.ts";
import { formatTimings, startFleet, table } from "../testbed/fleet.ts";
import { canRunRealNode, ownerOf } from "../testbed/real-node/can-run.ts";
import type { Fleet } from "../testbed/types.ts";
import { acquirePidLock } from "./lock.ts";
import type { RunningService, Service } from "./service.ts";

/** SERVICES: what `npm start` runs on top of the fleet, in start order (stopped in reverse): services.ts. */
const { SERVICES } = (await import("./services.ts")) as { SERVICES: Service[] };

const root = join(import.meta.dirname, "..", "..", "..");
// BERTH_DATA_DIR: another folder than the clone's .data (the npm start journey test runs a second copy).
const dataDir = process.env.BERTH_DATA_DIR ?? join(root, ".data");
const log = (line: string) => console.log(line);
const rel = (p: string) => relative(process.cwd(), p) || ".";

async function main(): Promise<number> {
  const lock = acquirePidLock(join(dataDir, "berth.pid"), "start/main.ts");
  if (!lock.acquired) {
    console.error(`Berth is already running (pid ${lock.holder})`);
    return 1;
  }
  const abort = new AbortController();
  const running: { name: string; service: RunningService }[] = [];
  let fleet: Fleet | undefined;
  let stopping = false;

  const shutdown = async (why: string): Promise<void> => {
    log(`[berth] ${why}: stopping (Ctrl-C again to kill at once)`);
    for (const { name, service } of running.reverse()) {
      await service.stop().catch((err: unknown) => console.error(`[berth] stopping ${name}: ${String(err)}`));
    }
    await fleet?.stop();
    lock.release();
  };
  const stopped = new Promise<string>((resolve) => {
    for (const sig of ["SIGINT", "SIGTERM"] as const) {
      process.on(sig, () => {
        if (stopping) {
          // The 'exit' hook of the test bed SIGKILLs every process group still alive.
          lock.release();
          process.exit(130);
        }
        stopping = true;
        abort.abort();
        resolve(sig);
      });
    }
  });
  const keepAlive = setInterval(() => {}, 1 << 30);

  try {
    const binDir = await buildBinaries(abort.signal);
    const fleetDir = join(dataDir, "fleet");
    rmSync(fleetDir, { recursive: true, force: true });
    log(`[berth] starting ${fleetConfig.clusters.map((c) => c.name).join(", ")} (data in ${rel(fleetDir)})`);
    const realNodes = realNodeDecision();
    if (realNodes) findNodeBinaries(); // cached after the first run; a cold build prints its progress
    fleet = await startFleet(fleetConfig, { binDir, dataDir: fleetDir, log, signal: abort.signal, realNodes });

    const kubeconfigs = new Map<string, string>();
    for (const c of fleet.clusters) {
      const file = join(dataDir, `kubeconfig-${c.name}.yaml`);
      writeFileSync(file, c.kubeconfig, { mode: 0o600 });
      kubeconfigs.set(c.name, file);
    }

    const published: Record<string, string> = {};
    for (const s of SERVICES) {
      if (stopping) break;
      const t = performance.now();
      log(`[berth] starting ${s.name}`);
      const service = await s.start({ root, dataDir, fleet, published, log });
      running.push({ name: s.name, service });
      Object.assign(published, service.publish);
      log(`[berth] ${s.name} ready in ${((performance.now() - t) / 1000).toFixed(1)}s`);
    }

    if (!stopping) {
      const f = fleet;
      log("");
      log(
        table(
          ["cluster", "kind", "apiserver", "kubeconfig"],
          f.clusters.map((c) => [c.name, c.kind, c.server, rel(kubeconfigs.get(c.name) ?? "")]),
        ),
      );
      log("");
      for (const c of f.clusters) log(`  kubectl --kubeconfig ${rel(kubeconfigs.get(c.name) ?? "")} get nodes`);
      const endpoints = running.flatMap((r) => (r.service.endpoints ?? []).map((e) => [r.name, e.name, e.url]));
      if (endpoints.length > 0) {
        log("");
        log(table(["service", "endpoint", "url"], endpoints));
      }
      log("");
      log(formatTimings(f.timings));
      log("");
      log(
        `[berth] fleet up in ${(f.startMs / 1000).toFixed(1)}s; logs in ${rel(f.dataDir)}/<cluster>/logs. Ctrl-C stops everything.`,
      );
    }

    await shutdown(`received ${await stopped}`);
    log("[berth] stopped");
    return 0;
  } catch (err) {
    if (stopping) {
      await shutdown("interrupted during start");
      log("[berth] stopped");
      return 0;
    }
    console.error(`[berth] start failed: ${err instanceof Error ? err.message : String(err)}`);
    stopping = true;
    await shutdown("start failed");
    return 1;
  } finally {
    clearInterval(keepAlive);
  }
}

/** Whether the fleet's real node starts; says so, or why not, in one line. */
function realNodeDecision(): boolean {
  const named = fleetConfig.clusters.filter((c) => c.realNode).map((c) => c.name);
  if (named.length === 0) return false;
  if (process.env.BERTH_REAL_NODE === "0") {
    log("[berth] real node: left out (BERTH_REAL_NODE=0); GPU clusters run kwok nodes alone");
    return false;
  }
  const can = canRunRealNode();
  if (!can.ok) {
    log(`[berth] real node: not on this machine (${can.reason}); GPU clusters run kwok nodes alone`);
    return false;
  }
  const taken = fleetConfig.clusters.flatMap((c) => {
    const name = c.realNode ? (c.realNode.name ?? `${c.name}-real-1`) : undefined;
    const pid = name ? ownerOf(name) : undefined;
    return name && pid ? [`${name} runs already in process ${pid}`] : [];
  });
  if (taken.length > 0) {
    log(`[berth] real node: left out (${taken.join("; ")}); GPU clusters run kwok nodes alone`);
    return false;
  }
  log(
    `[berth] real node: a real kubelet and containerd join ${named.join(", ")} (fake GPUs; BERTH_REAL_NODE=0 leaves it out)`,
  );
  return true;
}

/** Runs the builder; its progress goes to our stderr, its last stdout line is the binaries' folder. */
function buildBinaries(signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", [join(root, "e2e/testbed/build-binaries.sh")], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
    });
    const onAbort = () => child.kill("SIGTERM");
    signal.addEventListener("abort", onAbort, { once: true });
    child.on("error", reject);
    child.on("exit", (code) => {
      signal.removeEventListener("abort", onAbort);
      const dir = out.trim().split("\n").at(-1) ?? "";
      if (code === 0 && dir) resolve(dir);
      else reject(new Error(`e2e/testbed/build-binaries.sh exited with ${code}; see the messages above`));
    });
  });
}

process.exit(await main());
