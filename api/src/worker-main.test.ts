// worker-main.ts as its own process: configured from the environment, it leads (the Lease names it and its
// session controller starts) and SIGTERM stops it with the lease released.

import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { resourcePath, SessionKind } from "@berth/crds";
import { loadCrds } from "@berth/crds/manifests";
import { childLogs, type Fleet, KubeHttp, startFleet } from "@berth/e2e";
import { mintControlPlaneCredential } from "@berth/e2e/clusters/credentials";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { TEST_WEBHOOK_SECRET_KEYS } from "./config.test-support.ts";
import { createTestDatabase, type TestDatabase } from "./db/db.test-support.ts";
import { workerRbac } from "./rbac.ts";

describe("worker-main.ts as a process", () => {
  let fleet: Fleet | undefined;
  let admin: KubeHttp | undefined;
  let database: TestDatabase | undefined;
  let dir: string | undefined;
  let kubeconfig = "";
  let child: ChildProcess | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "berth-worker-main-"));
    [fleet, database] = await Promise.all([
      startFleet({ clusters: [{ name: "mgmt", kind: "management" }] }),
      createTestDatabase(),
    ]);
    const mgmt = fleet.cluster("mgmt");
    admin = new KubeHttp({ server: mgmt.server, caPem: mgmt.caPem, token: mgmt.adminToken });
    for (const crd of loadCrds()) await admin.ensure("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
    await admin.ensure("/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "berth-system" },
    });
    // A busy machine can take tens of seconds to serve a new CRD; the bound only catches one never served.
    const deadline = Date.now() + 60_000;
    while ((await admin.raw("GET", resourcePath(SessionKind))).status !== 200) {
      if (Date.now() > deadline) throw new Error("the Session CRD is never served");
      await new Promise((r) => setTimeout(r, 100));
    }
    // The worker's own least-privilege credential, as `npm start` mints it (RBAC is on in the bed).
    const cred = await mintControlPlaneCredential(mgmt, { name: "berth-worker", rbac: workerRbac() });
    kubeconfig = join(dir, "worker.kubeconfig");
    writeFileSync(kubeconfig, cred.kubeconfig, { mode: 0o600 });
  });

  afterEach(() => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    admin?.close();
    await database?.drop();
    await fleet?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("leads from BERTH_* variables, and SIGTERM stops it and releases the lease", async () => {
    const main = fileURLToPath(new URL("./worker-main.ts", import.meta.url));
    child = spawn(process.execPath, [main], {
      env: {
        PATH: process.env.PATH ?? "",
        DATABASE_URL: database?.url,
        BERTH_WEBHOOK_SECRET_KEYS: TEST_WEBHOOK_SECRET_KEYS,
        BERTH_KUBECONFIG: kubeconfig,
        BERTH_WORKER_IDENTITY: "worker-main-test",
        // Not a failover test: a lease long enough that a stalled child never loses it (role "leader" below).
        BERTH_WORKER_LEASE_DURATION_MS: "15000",
        BERTH_WORKER_LEASE_RENEW_DEADLINE_MS: "10000",
        BERTH_WORKER_LEASE_RETRY_PERIOD_MS: "250",
        BERTH_DATABASE_POOL_MAX: "4",
        BERTH_WORKER_STATUS_HOST: "127.0.0.1",
        BERTH_WORKER_STATUS_PORT: "0",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<number | null>((resolve) => child?.once("exit", (code) => resolve(code)));
    const { lines, stderr } = childLogs(child);
    // A cold `node worker-main.ts` on a loaded 2-CPU machine can take tens of seconds to load its modules.
    await expect
      .poll(() => lines.some((l) => l.msg === "session controller started") || child?.exitCode !== null, {
        timeout: 90_000,
        interval: 200,
      })
      .toBe(true);
    expect(child.exitCode, stderr()).toBeNull();
    const lease = () =>
      admin?.json<{ spec: { holderIdentity?: string } }>(
        "GET",
        "/apis/coordination.k8s.io/v1/namespaces/berth-system/leases/berth-worker",
      );
    expect((await lease())?.spec.holderIdentity).toBe("worker-main-test");
    // Its status listener: healthy as the leader, and the leader gauge says so.
    await expect.poll(() => lines.some((l) => l.msg === "worker started")).toBe(true);
    const status = lines.find((l) => l.msg === "worker started")?.status as string;
    const health = await fetch(`${status}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ ok: true, role: "leader", identity: "worker-main-test" });
    const metrics = await (await fetch(`${status}/metrics`)).text();
    expect(metrics).toMatch(/^berth_worker_leader\{identity="worker-main-test"\} 1$/m);
    // How long its placement passes take (it runs one on start), by quantile.
    await expect
      .poll(async () => (await fetch(`${status}/metrics`)).text())
      .toMatch(/^berth_worker_placement_pass_seconds\{[^}]*quantile="0\.99"[^}]*\} [0-9.e-]+$/m);
    expect(metrics).toMatch(/^process_cpu_seconds_total/m);

    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect((await lease())?.spec.holderIdentity).toBeUndefined();
    expect(lines.map((l) => l.msg)).toEqual(expect.arrayContaining(["lease released", "worker stopped"]));
  }, 150_000);
});
