// The session reconciler, in-process against a fleet in memory: level-based, a mirror where the session
// wants no pod is deleted again on every reconcile until it is gone.
import type { Session } from "@berth/crds";
import { afterEach, describe, expect, it } from "vitest";
import type { InventoryNodeView } from "../placement/capacity.ts";
import {
  aFleet,
  aRunningSession,
  CLUSTER,
  H100,
  MIRRORS,
  mirrorDeletes,
  mirrorOf,
  setDesired,
  standing,
  statusOf,
  statusWrites,
  stopFleets,
  until,
} from "./fleet.test-support.ts";
import { DEFAULT_TIMING } from "./lifecycle.ts";

afterEach(stopFleets);

describe("a mirror where the session wants no pod", () => {
  it("is deleted again after a failed DELETE when a lost node puts the session back in the queue", async () => {
    const f = await aRunningSession();
    let refuse = 2;
    f.gpu.fail = (method, path) => (method === "DELETE" && path.startsWith(MIRRORS) && refuse-- > 0 ? 500 : undefined);
    f.store.nodes = [{ ...(f.store.nodes[0] as InventoryNodeView), ready: false }];
    f.store.inventoryChanged();
    await until("the mirror deleted", () => mirrorOf(f.gpu) === undefined, 5_000);
    await f.controller.idle();
    expect(mirrorDeletes(f.gpu).slice(0, 3)).toEqual([500, 500, 200]);
    expect(statusOf(f.mgmt)).toMatchObject({ phase: "Queued" });
  });

  it("is deleted when the session failed, after a failed DELETE", async () => {
    const f = await aRunningSession();
    let refuse = 1;
    f.gpu.fail = (method, path) => (method === "DELETE" && path.startsWith(MIRRORS) && refuse-- > 0 ? 500 : undefined);
    f.store.report({
      sessionId: f.id,
      phase: "Failed",
      reason: "ImagePullFailed",
      message: "ImagePullBackOff",
      revision: mirrorOf(f.gpu)?.revision as number,
    });
    await until("the mirror deleted", () => mirrorOf(f.gpu) === undefined, 5_000);
    expect(statusOf(f.mgmt)?.phase).toBe("Failed");
    expect(mirrorDeletes(f.gpu).slice(0, 2)).toEqual([500, 200]);
  });

  it("is deleted when a Failed session is terminated, and holds its GPU until it is reported gone", async () => {
    const f = aFleet(2, 1);
    const [failed, waiting] = f.names as [string, string];
    const id = f.ids[0] as string;
    const s = f.mgmt.list("sessions")[0] as unknown as Session;
    s.status = { phase: "Failed", cluster: CLUSTER, gpuModel: H100 };
    s.spec.desiredState = "Terminated";
    f.mgmt.put("sessions", s as never);
    f.gpu.put("sessionmirrors", { metadata: { name: failed, namespace: "berth-sessions" } });
    f.store.revisions.set(id, 1);
    f.store.reps = [
      { clusterId: CLUSTER, sessionId: id, phase: "Failed", reason: "ImagePullFailed", revision: 1, at: "t1" },
    ];
    // Accepted; its finalizer keeps it while the operator removes the pod.
    f.gpu.fail = (method) => (method === "DELETE" ? 200 : undefined);
    await f.controller.start();
    await until("the mirror deleted", () => mirrorDeletes(f.gpu).length > 0, 5_000);
    await f.controller.idle();
    const phaseOf = (name: string) => standing(f).find((x) => x.metadata.name === name)?.status?.phase;
    expect(phaseOf(failed)).toBe("Terminated");
    expect(f.gpu.log.filter((r) => r.method === "DELETE").every((r) => r.path === `${MIRRORS}/${failed}`)).toBe(true);
    // Its pod may hold the GPU until the operator says the mirror is gone.
    expect(phaseOf(waiting)).toBe("Queued");
    f.store.report({ sessionId: id, phase: "Terminated", revision: 1 });
    await until("the other placed", () => phaseOf(waiting) === "Starting", 5_000);
  });

  it("becomes Unknown within a poll once its cluster's last report is older than the grace, the record unchanged", async () => {
    const f = await aRunningSession(1, { pollMs: 20, reportGraceMs: 300 });
    // The operator stops calling: its record stays as it was, only the clock moves past the grace.
    f.store.lastReportAt = new Date();
    await until("Unknown", () => statusOf(f.mgmt)?.phase === "Unknown", 3_000);
  });

  it("is deleted once its cluster answers again when the session was paused while that cluster was silent", async () => {
    const f = await aRunningSession(1, {
      pollMs: 20,
      timing: { ...DEFAULT_TIMING, silentClusterGiveUpMs: 0 },
    });
    // Silent: its operator does not call, and its apiserver does not answer.
    f.store.silent = true;
    f.gpu.fail = (method, path) => (method === "DELETE" && path.startsWith(MIRRORS) ? 503 : undefined);
    await until("Unknown", () => statusOf(f.mgmt)?.phase === "Unknown");
    await setDesired(f, "Paused");
    await until("Paused", () => statusOf(f.mgmt)?.phase === "Paused");
    expect(mirrorOf(f.gpu)).toBeDefined();
    // Back: its operator reports the pod it still runs.
    f.gpu.fail = () => undefined;
    f.store.silent = false;
    f.store.report({ sessionId: f.id, phase: "Running", revision: mirrorOf(f.gpu)?.revision as number });
    await until("the mirror deleted", () => mirrorOf(f.gpu) === undefined, 5_000);
    expect(statusOf(f.mgmt)?.phase).toBe("Paused");
  });
});

describe("a session's status", () => {
  it("is written once from fresh data when the first write meets a newer version (409)", async () => {
    const f = await aRunningSession();
    let refuse = 1;
    f.mgmt.fail = (method, path) => (method === "PUT" && path.endsWith("/status") && refuse-- > 0 ? 409 : undefined);
    f.store.report({
      sessionId: f.id,
      phase: "Failed",
      reason: "ImagePullFailed",
      message: "ImagePullBackOff",
      revision: mirrorOf(f.gpu)?.revision as number,
    });
    await until("Failed", () => statusOf(f.mgmt)?.phase === "Failed", 5_000);
    await f.controller.idle();
    expect(f.controller.counts.conflicts).toBeGreaterThanOrEqual(1);
    expect(statusWrites(f.mgmt, "Failed")).toEqual(new Map([[f.name, 1]]));
  });

  it("does not go back from Running when an older report's read comes back after a newer one's", async () => {
    const f = aFleet(1);
    const s = f.mgmt.list("sessions")[0] as unknown as Session;
    s.status = { phase: "Starting", cluster: CLUSTER, gpuModel: H100 };
    f.mgmt.put("sessions", s as never);
    f.store.revisions.set(f.ids[0] as string, 1);
    // Reads of the reports that overlap (two notifications, or a resync and a notification): the first
    // read, which saw the operator's Starting, is answered after the second, which saw its Running.
    const read = f.store.reports.bind(f.store);
    let release: () => void = () => {};
    let holdNext = false;
    let heldAnswered = false;
    f.store.reports = async (ids) => {
      const held = holdNext;
      holdNext = false;
      const got = await read(ids);
      if (held) {
        await new Promise<void>((r) => (release = r));
        heldAnswered = true;
      }
      return got;
    };
    await f.controller.start();
    await until("its mirror", () => mirrorOf(f.gpu) !== undefined);
    const revision = mirrorOf(f.gpu)?.revision as number;
    holdNext = true;
    f.store.report({ sessionId: f.ids[0] as string, phase: "Starting", reason: "PodPending", revision });
    await new Promise((r) => setTimeout(r, 5));
    f.store.report({ sessionId: f.ids[0] as string, phase: "Running", revision });
    await until("Running", () => statusOf(f.mgmt)?.phase === "Running", 5_000);
    await f.controller.idle();
    release();
    // The late answer taken in (the controller's step after the read runs before the next timer), and
    // what it woke settled.
    await until("the held read answered", () => heldAnswered);
    await f.controller.idle();
    expect(statusOf(f.mgmt)?.phase).toBe("Running");
    expect(f.store.transitions.map(([, , after]) => after)).not.toContain("Starting");
  });

  it("is read from the report of the current mirror only, not an earlier mirror's", async () => {
    const f = await aRunningSession();
    const revision = mirrorOf(f.gpu)?.revision as number;
    // A late report about a mirror before this one says nothing about this one.
    const reads = f.store.reportReads.length;
    f.store.report({ sessionId: f.id, phase: "Failed", reason: "PodFailed", revision: revision - 1 });
    await until("the report read", () => f.store.reportReads.slice(reads).some((ids) => !ids || ids.includes(f.id)));
    await f.controller.idle();
    expect(statusOf(f.mgmt)?.phase).toBe("Running");
  });
});
