// What goes wrong in a fleet: a node is drained (its session's pod moves to another node of the
// cluster), a node is lost (its session is placed again or waits in the queue, and the user is told
// why), and a cluster's operator goes silent (its sessions turn Unknown, then come back), also to a
// worker leader that took over meanwhile; and a leader dies owing the record of a status it wrote.
import type { RunningWorker } from "@berth/controllers";
import { resourcePath, SessionMirrorKind, sessionPath } from "@berth/crds";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bedApi } from "../api-client.ts";
import { until } from "../until.ts";
import {
  adminKube,
  gpuCluster,
  H100,
  L4,
  MANAGEMENT,
  openEventStream,
  SESSIONS_NS,
  type SessionsBed,
  startSessionsBed,
} from "./harness.ts";

// Journeys wait on real clusters; a loaded machine (other beds running) stretches them.
vi.setConfig({ testTimeout: 180_000 });

let bed: SessionsBed;
/** The worker leading now: the last cases each crash it and start the next. */
let leader: RunningWorker;
beforeAll(async () => {
  bed = await startSessionsBed({
    fleet: {
      clusters: [
        MANAGEMENT,
        gpuCluster("gpu-a", [
          { name: "gpu-a-1", gpuModel: H100, gpuCount: 1 },
          { name: "gpu-a-2", gpuModel: H100, gpuCount: 1 },
        ]),
        gpuCluster("gpu-b", [{ name: "gpu-b-1", gpuModel: L4, gpuCount: 2 }]),
      ],
    },
  });
  leader = bed.worker;
});
afterAll(async () => {
  await bed?.stop();
});

describe("a drained node", () => {
  it("moves the session's pod to another node of its cluster", async () => {
    const { id } = await bedApi(bed, bed.alice).call("createSession", {
      body: { offering: "h100", preset: "gpu-small", image: "jupyterlab" },
    });
    const first = await bed.waitFor(bed.alice, id, (s) => s.phase === "Running", "Running");
    const node = { clusterId: bed.gpu["gpu-a"]?.id as string, nodeName: first.node as string };
    // A refused drain throws (ApiError): answered is the success the check stood for.
    await bedApi(bed, bed.superAdmin).call("drainNode", { params: node, body: {} });
    const moved = await bed.waitFor(
      bed.alice,
      id,
      (s) => s.phase === "Running" && s.node !== first.node,
      "Running on the other node",
      60_000,
    );
    expect(moved.cluster_id).toBe(first.cluster_id);
    await bedApi(bed, bed.superAdmin).call("uncordonNode", { params: node, body: {} });
    await bedApi(bed, bed.alice).call("terminateSession", { params: { sessionId: id } });
    await bed.waitFor(bed.alice, id, (s) => s.phase === "Terminated", "Terminated");
  });
});

describe("a lost node", () => {
  it("puts its session back in the queue with the reason, and runs it when a node comes back", async () => {
    const stream = await openEventStream(`${bed.t.api.url}/api/v1/sessions/events`, bed.bob.token);
    try {
      // Both H100 nodes busy: bob's session and alice's.
      const h100 = { offering: "h100", preset: "gpu-small", image: "jupyterlab" };
      const { id: b } = await bedApi(bed, bed.bob).call("createSession", { body: h100 });
      const { id: a } = await bedApi(bed, bed.alice).call("createSession", { body: h100 });
      const running = await bed.waitFor(bed.bob, b, (s) => s.phase === "Running", "b Running");
      await bed.waitFor(bed.alice, a, (s) => s.phase === "Running", "a Running");

      // bob's node goes away.
      const gpuA = bed.fleet.cluster("gpu-a");
      const k = adminKube(gpuA);
      await k.json("DELETE", `/api/v1/nodes/${running.node}`);
      k.close();
      const queued = await bed.waitFor(
        bed.bob,
        b,
        (s) => s.phase === "Queued",
        "b Queued after its node was lost",
        60_000,
      );
      expect(queued.cluster_id).toBeNull(); // it runs nowhere now
      const told = await stream.waitFor(
        (e) => e.data.session_id === b && e.data.session.reason === "NodeLost",
        "the NodeLost event",
      );
      expect(told.data.session.message).toContain(running.node);

      // A new node: bob's session runs again.
      await gpuA.addGpuNode({ name: "gpu-a-3", gpuModel: H100, gpuCount: 1 });
      const back = await bed.waitFor(bed.bob, b, (s) => s.phase === "Running", "b Running on the new node", 60_000);
      expect(back.node).toBe("gpu-a-3");
      const events = await bedApi(bed, bed.orgAdmin).call("listSessionResourceEvents", { params: { sessionId: b } });
      const reasons = events.data.map((e) => e.reason);
      expect(reasons).toContain("NodeLost");
      // The earlier placement's mirror going away is not this placement's mirror lost.
      expect(reasons).not.toContain("MirrorLost");
      expect(stream.events.filter((e) => e.data.session_id === b).map((e) => e.data.session.reason)).not.toContain(
        "MirrorLost",
      );
    } finally {
      await stream.close();
    }
  });
});

describe("a silent cluster", () => {
  it("turns its sessions Unknown, and back to Running when its operator reports again", async () => {
    const { id } = await bedApi(bed, bed.bob).call("createSession", {
      body: { offering: "l4", preset: "gpu-small", image: "terminal" },
    });
    await bed.waitFor(bed.bob, id, (s) => s.phase === "Running", "Running");
    const gpuB = bed.gpu["gpu-b"];
    await gpuB?.operator?.stop({ release: false });
    const unknown = await bed.waitFor(bed.bob, id, (s) => s.phase === "Unknown", "Unknown", 60_000);
    expect(unknown.conditions.find((c: { type: string }) => c.type === "Ready")).toMatchObject({
      status: "Unknown",
      reason: "ClusterNotReporting",
    });
    expect((await bed.pods("gpu-b")).filter((p) => p.phase === "Running")).toHaveLength(1); // the pod kept running
    await gpuB?.startOperator();
    const back = await bed.waitFor(bed.bob, id, (s) => s.phase === "Running", "Running again", 60_000);
    expect(back.started_at).toBe(unknown.started_at);
  });
});

// It crashes the bed's first worker. The soak's sessions stuck Starting came this way
// (docs/dev/soak.md): a leader that starts while a cluster's operator reports again, after a silence.
describe("a silent cluster whose sessions a new worker leader takes over", () => {
  it("gives them back their operator's Running report: the same run on the same mirror", async () => {
    const gpuB = bed.gpu["gpu-b"];
    if (!gpuB) throw new Error("no gpu-b");
    const running = await bed.startRunning(bed.bob, { offering: "l4", preset: "gpu-small", image: "terminal" });
    const k = adminKube(gpuB.cluster);
    try {
      const revision = async () =>
        (
          await k.json<{ spec: { revision: number } }>(
            "GET",
            `${resourcePath(SessionMirrorKind, { namespace: SESSIONS_NS })}/${running.resource_name}`,
          )
        ).spec.revision;
      const placed = await revision();
      await gpuB.operator?.stop({ release: false });
      const unknown = await bed.waitFor(bed.bob, running.id, (s) => s.phase === "Unknown", "Unknown", 60_000);
      // The leader dies while the cluster is silent; its operator is back before another worker leads.
      await leader.stop({ release: false });
      const restarted = Date.now();
      await gpuB.startOperator();
      await until("gpu-b reporting again", async () => {
        const c = await bedApi(bed, bed.superAdmin).call("getCluster", { params: { clusterId: gpuB.id } });
        return Date.parse(c.last_report_at ?? "") > restarted;
      });
      leader = await bed.startWorker("worker-after-the-silence");
      await leader.leading(60_000);
      const back = await bed.waitFor(bed.bob, running.id, (s) => s.phase === "Running", "Running again", 60_000);
      // Its run goes on (not started again), on the mirror its operator reported: not written again.
      expect(back.started_at).toBe(unknown.started_at);
      expect(await revision()).toBe(placed);
    } finally {
      k.close();
    }
  });
});

// A status is written to the resource, then recorded in the history row. The soak's session stuck
// Terminating (docs/dev/soak.md) had its leader killed between the two: its resource said Terminated,
// and the next leader, whose memory did not know the record was owed, left the row Terminating for good.
describe("a worker leader that dies owing the record of a status it wrote", () => {
  it("leaves it to the next leader, which records it once, with no pod made again", async () => {
    // The sessions of the cases before hold every GPU: room for this one.
    await bed.fleet.cluster("gpu-b").addGpuNode({ name: "gpu-b-2", gpuModel: L4, gpuCount: 1 });
    const running = await bed.startRunning(bed.alice, { offering: "l4", preset: "gpu-small", image: "terminal" });
    const id = running.id as string;
    const db = bed.workerDb;
    const row = () => db("sessions").where({ id }).first("phase", "namespace", "cr_name", "interim_status");
    const { namespace, cr_name: name } = await row();
    const mgmt = adminKube(bed.fleet.cluster(MANAGEMENT.name));
    const gpuB = adminKube(bed.fleet.cluster("gpu-b"));
    try {
      // Postgres refuses this session's record of Terminated: the leader's write of it to the resource
      // lands and its record does not, as when it is killed between the two; then it dies.
      await db.raw(
        "CREATE FUNCTION e2e_lost_record() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'the leader died before this record'; END $$",
      );
      await db.raw(
        `CREATE TRIGGER e2e_lost_record BEFORE UPDATE ON sessions FOR EACH ROW
           WHEN (NEW.id = '${id}' AND NEW.phase = 'Terminated') EXECUTE FUNCTION e2e_lost_record()`,
      );
      try {
        // Answered means accepted: the contract gives terminate one success, 202 (api/openapi.json).
        await bedApi(bed, bed.alice).call("terminateSession", { params: { sessionId: id } });
        await until("Terminated on the resource", async () => {
          const s = await mgmt.json<{ status?: { phase?: string } }>("GET", sessionPath(namespace, name));
          return s.status?.phase === "Terminated";
        });
        expect((await row()).phase).toBe("Terminating");
        await leader.stop({ release: false });
      } finally {
        await db.raw("DROP TRIGGER IF EXISTS e2e_lost_record ON sessions");
        await db.raw("DROP FUNCTION IF EXISTS e2e_lost_record()");
      }

      leader = await bed.startWorker("worker-after-a-lost-record");
      await leader.leading(60_000);
      await until("Terminated in the history row", async () => (await row()).phase === "Terminated");
      expect((await row()).interim_status).toBeNull();
      // The stream (and so the webhooks) told once, from where the row stood.
      const ended = (await db("session_events").where({ session_id: id, type: "session.updated" }).select("payload"))
        .map((e) => e.payload)
        .filter((p) => p.view.phase === "Terminated");
      expect(ended).toHaveLength(1);
      expect(ended[0].previous_phase).toBe("Terminating");
      // Nothing made again on the GPU cluster: no mirror, no pod.
      const mirrors = resourcePath(SessionMirrorKind, { namespace: SESSIONS_NS });
      expect((await gpuB.raw("GET", `${mirrors}/${name}`)).status).toBe(404);
      expect((await bed.pods("gpu-b")).filter((p) => p.name === name && !p.deleting)).toEqual([]);
    } finally {
      mgmt.close();
      gpuB.close();
    }
  });
});
