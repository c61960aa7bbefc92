// Operator processes against the control plane's refusals and against each other: a 401 is retried and a
// replaced token file is picked up without a restart; a 403 never hot-loops; of two replicas only the
// leader reports and the other takes over; main.ts runs it all from environment variables.
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { childLogs } from "@berth/e2e";
import { type Bed, eventually, FAILOVER_LEASE, H100, LEASE, SYSTEM_NS, sleep, startBed } from "@berth/e2e/operator-bed";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type RunningOperator, startOperator } from "../operator.ts";
import { captureLog } from "../testing/log.test-support.ts";
import { type StubControlPlane, startStubControlPlane } from "../testing/stub-control-plane.test-support.ts";

let bed: Bed;
let stub: StubControlPlane;
const running: RunningOperator[] = [];
const echo = process.env.BERTH_TEST_ECHO_LOGS === "1";

beforeAll(async () => {
  bed = await startBed([{ name: "h100-1", gpuModel: H100, gpuCount: 8 }]);
  stub = await startStubControlPlane({ tokens: { "tok-a": "clu_bed", "tok-b": "clu_bed", "tok-other": "clu_other" } });
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((o) => o.stop()));
});

afterAll(async () => {
  await stub?.close();
  await bed?.stop();
});

async function operator(
  identity: string,
  tokenFile: string,
  lease?: { durationMs: number; renewDeadlineMs: number },
  log = captureLog("debug", echo),
) {
  const config = bed.config({ identity, tokenFile, controlPlaneUrl: stub.url, ...(lease ? { lease } : {}) });
  const op = await startOperator(config, { log: log.log });
  running.push(op);
  return { op, records: log.records };
}

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

const requestsWith = (token: string) => stub.requests.filter((r) => r.token === token);

describe("the operator and its token", () => {
  it("keeps retrying a 401 with backoff, says why, and picks up a replaced token file without a restart", async () => {
    const tokenFile = bed.writeToken("token-401", "expired-token");
    const { op, records } = await operator("op-401", tokenFile);
    await eventually(() => requestsWith("expired-token").length >= 3, "three refused attempts");
    await sleep(2_000); // a window to count attempts in (a rate), not a wait for an event
    // Backoff 100 ms doubling to a 1 s cap, half of it jitter: 5 to 10 attempts in these ~3 s, not hundreds.
    const refused = requestsWith("expired-token");
    expect(refused.length).toBeGreaterThanOrEqual(4);
    expect(refused.length).toBeLessThanOrEqual(12);
    expect(refused.every((r) => r.status === 401)).toBe(true);
    const why = records.find((r) => r.status === "401");
    expect(why).toMatchObject({
      level: 40,
      kind: "InventoryReport",
      cluster: "clu_bed",
      code: "token_expired",
      reason: "the operator token has expired",
    });
    expect(why?.retryInMs).toEqual(expect.any(Number));

    bed.writeToken("token-401", "tok-a");
    await eventually(() => requestsWith("tok-a").some((r) => r.status === 200), "a report accepted with the new token");
    expect(op.isLeader()).toBe(true);
    // The stub records its 200 as it answers; the operator logs (and counts) once it has read the answer.
    await eventually(() => records.some((r) => r.msg === "inventory accepted again"), "the recovery logged");
    const metrics = await (await fetch(op.metricsUrl)).text();
    expect(metrics).toMatch(/berth_operator_reports_total\{report="inventory",status="401"[^}]*\} \d+/);
    expect(metrics).toMatch(/berth_operator_reports_total\{report="inventory",status="200"[^}]*\} 1/);
  });

  it("retries a 403 (a token of another cluster) only at the backoff cap, never in a hot loop", async () => {
    const tokenFile = bed.writeToken("token-403", "tok-other");
    const { records } = await operator("op-403", tokenFile);
    // The inventory reporter's retries (the storage report has its own fixed tick).
    const inventory = () => requestsWith("tok-other").filter((r) => r.path === "/internal/v1/inventory");
    await eventually(() => inventory().length >= 2, "two forbidden attempts");
    await sleep(1_500); // a window to measure the gaps between attempts in, not a wait for an event
    const forbidden = inventory();
    expect(forbidden.every((r) => r.status === 403)).toBe(true);
    const gaps = forbidden.slice(1).map((r, i) => r.at - (forbidden[i]?.at ?? 0));
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(450); // the 1 s cap, at most half of it jitter
    expect(records.find((r) => r.status === "403")).toMatchObject({ level: 50, code: "forbidden" });
  });
});

describe("two operator replicas", () => {
  it("only the leader reports; the follower takes over after the lease expires, and at once after a graceful stop", async () => {
    const since = stub.requests.length;
    const a = await operator("replica-a", bed.writeToken("token-a", "tok-a"), FAILOVER_LEASE);
    const b = await operator("replica-b", bed.writeToken("token-b", "tok-b"), FAILOVER_LEASE);
    const [leader, follower, leaderToken, followerToken, followerSaid] = await eventually(() => {
      if (a.op.isLeader() && !b.op.isLeader()) return [a.op, b.op, "tok-a", "tok-b", b.records] as const;
      if (b.op.isLeader() && !a.op.isLeader()) return [b.op, a.op, "tok-b", "tok-a", a.records] as const;
      return undefined;
    }, "one leader");
    await eventually(
      () => stub.requests.slice(since).some((r) => r.token === leaderToken && r.status === 200),
      "a report from the leader",
    );
    const followerHealth = await fetch(follower.healthUrl);
    expect(followerHealth.status).toBe(200);
    expect(await followerHealth.json()).toMatchObject({ role: "follower" });

    // A change is reported by the leader alone.
    await bed.admin.json(
      "PATCH",
      "/api/v1/nodes/h100-1",
      { metadata: { labels: { replicas: "one" } } },
      "application/merge-patch+json",
    );
    await eventually(() => stub.latestInventory("clu_bed")?.nodes[0]?.labels.replicas === "one", "the change reported");
    // The follower read the lease as the leader's and never led, so it started nothing that reports
    // (reporters run only while leading): nothing of it can still be on its way.
    await eventually(
      () => followerSaid.some((r) => r.msg === "following" && r.holder === leader.identity),
      "the follower following the leader",
    );
    expect(followerSaid.filter((r) => r.msg === "started leading")).toEqual([]);
    expect(stub.requests.slice(since).filter((r) => r.token === followerToken)).toEqual([]);

    // The leader dies without releasing: the follower waits out the lease (3 s) and takes over.
    const died = Date.now();
    await leader.stop({ release: false });
    await eventually(() => follower.isLeader(), "the follower leading", 15_000);
    const tookOverAfter = Date.now() - died;
    expect(tookOverAfter).toBeGreaterThanOrEqual(2_000);
    await eventually(
      () => stub.requests.some((r) => r.at >= died && r.token === followerToken && r.status === 200),
      "a report from the new leader",
    );
    expect(stub.requests.filter((r) => r.at >= died && r.token === leaderToken)).toEqual([]);

    // A new replica follows; the leader stops gracefully (releases the lease): the new one leads at once.
    const c = await operator("replica-c", bed.writeToken("token-c", "tok-a"), FAILOVER_LEASE);
    // It has read the lease and follows its holder.
    await eventually(
      () => c.records.some((r) => r.msg === "following" && r.holder === follower.identity),
      "replica-c following",
    );
    expect(c.op.isLeader()).toBe(false);
    const leasePath = `/apis/coordination.k8s.io/v1/namespaces/${SYSTEM_NS}/leases/${LEASE}`;
    const held = (await bed.admin.json<{ spec: LeaseSpec }>("GET", leasePath)).spec;
    expect(held.holderIdentity).toBe(follower.identity);
    const stopped = Date.now();
    await follower.stop();
    await eventually(() => c.op.isLeader(), "the new replica leading", 20_000);
    // Judged from the Lease, not a stopwatch (a busy machine stretches any wall-clock budget): a released
    // lease (no holder) is acquired without counting a transition, a takeover after expiry counts one.
    const taken = (await bed.admin.json<{ spec: LeaseSpec }>("GET", leasePath)).spec;
    expect(taken.holderIdentity).toBe("replica-c");
    expect(taken.leaseTransitions ?? 0).toBe(held.leaseTransitions ?? 0);
    await eventually(
      () => stub.requests.some((r) => r.at >= stopped && r.token === "tok-a" && r.status === 200),
      "a report from replica-c",
    );
  });
});

describe("main.ts", () => {
  let child: ChildProcess | undefined;
  afterEach(() => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });

  it("runs the operator from BERTH_OPERATOR_* variables, and SIGTERM stops it and releases the lease", async () => {
    const main = fileURLToPath(new URL("../main.ts", import.meta.url));
    child = spawn(process.execPath, [main], {
      env: {
        PATH: process.env.PATH ?? "",
        BERTH_OPERATOR_CLUSTER_ID: "clu_bed",
        BERTH_OPERATOR_KUBECONFIG: bed.kubeconfigPath,
        BERTH_OPERATOR_CONTROL_PLANE_URL: stub.url,
        BERTH_OPERATOR_TOKEN_FILE: bed.writeToken("token-main", "tok-b"),
        BERTH_OPERATOR_HTTP_HOST: "127.0.0.1",
        BERTH_OPERATOR_HTTP_PORT: "0",
        BERTH_OPERATOR_IDENTITY: "main-process",
        BERTH_OPERATOR_LEASE_DURATION_MS: "3000",
        BERTH_OPERATOR_LEASE_RENEW_DEADLINE_MS: "2000",
        BERTH_OPERATOR_LEASE_RETRY_PERIOD_MS: "250",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const { lines, stderr } = childLogs(child);
    // A cold `node main.ts` on a loaded 2-CPU machine can take tens of seconds to load its modules.
    const started = await eventually(
      () => lines.find((l) => l.msg === "operator started"),
      `the start line (stderr: ${stderr()})`,
      90_000,
    );
    const since = Date.now();
    await eventually(
      // An inventory report (sent once the watches are synced), not the metrics round that starts with the lead.
      () =>
        stub.requests.some(
          (r) =>
            r.at >= since - 1_000 && r.token === "tok-b" && r.status === 200 && r.path === "/internal/v1/inventory",
        ),
      "an inventory report from the child",
    );
    expect((await fetch(`${started.status}/healthz`)).status).toBe(200);

    const exited = new Promise<number | null>((resolve) => child?.once("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    const lease = await bed.admin.json<{ spec: { holderIdentity?: string } }>(
      "GET",
      `/apis/coordination.k8s.io/v1/namespaces/${SYSTEM_NS}/leases/${LEASE}`,
    );
    expect(lease.spec.holderIdentity).toBeUndefined();
    expect(lines.some((l) => l.msg === "lease released")).toBe(true);
  }, 150_000);

  it("refuses to start with every configuration problem listed", async () => {
    const main = fileURLToPath(new URL("../main.ts", import.meta.url));
    const c = spawn(process.execPath, [main], {
      env: { PATH: process.env.PATH ?? "", BERTH_OPERATOR_HTTP_PORT: "x" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const { stderr } = childLogs(c);
    const code = await new Promise<number | null>((resolve) => c.once("exit", resolve));
    expect(code).toBe(2);
    for (const name of [
      "BERTH_OPERATOR_CLUSTER_ID",
      "BERTH_OPERATOR_CONTROL_PLANE_URL",
      "BERTH_OPERATOR_TOKEN_FILE",
      "BERTH_OPERATOR_HTTP_PORT",
    ])
      expect(stderr()).toContain(name);
  }, 120_000);
});
