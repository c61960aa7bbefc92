// biome-ignore-all lint/suspicious/noExplicitAny: journeys read the API's JSON as it comes
// The idle rule on a real JupyterLab (docs/dev/idle-and-limits.md): every signal comes from a real source.
// gpu-b's operator reads the real Jupyter's /api/kernels at the pod's address (busy while a cell runs, then
// the kernel's own last_activity), gpu-b's gateway reports the person's traffic (the frame that ran the cell),
// and the GPU reading comes from a stand-in exporter at 0 % (no GPU exists here). The reclaim loop is the
// worker's own (reclaimWorkerLoop), run pass by pass with its clock moved forward, as the kwok idle journey
// does: the rule's floor (no pause within 10 minutes of a start) and its warnings 15 and 5 minutes ahead are
// constants of the plan, so real time would take over an hour. Its signals are read as fresh as the wall clock
// says (`staleMs` follows the move). While the cell runs the stretch follows the busy kernel and nothing is
// sent; once the kernel is idle the owner is warned twice (notification, stream, a Kubernetes Event on the
// Session), then paused through the normal pause path: the pod goes, the card is free, the volume stays and
// the usage ends with the container; a resume brings a new pod that reads the file written before.
//
// Needs root and containerd (e2e/src/testbed/real-node/can-run.ts); skipped with its reason elsewhere.
import { reclaimWorkerLoop } from "@berth/api";
import { HttpKube } from "@berth/controllers/kube";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bedApi } from "../api-client.ts";
import { kubeConfigFrom } from "../testbed/kubeconfig.ts";
import { canRunRealNode } from "../testbed/real-node/index.ts";
import {
  executeRequest,
  gatewayOf,
  openLab as openLabIn,
  podOf,
  REAL_PRESET,
  type RealFleet,
  replyTo,
  startRealFleet,
} from "./real-fleet.ts";

vi.setConfig({ testTimeout: 900_000, hookTimeout: 900_000 });

const NODE = "gpu-b-real-idle";
const MIN = 60_000;
const can = canRunRealNode();
let f: RealFleet;

beforeAll(async () => {
  if (!can.ok) return;
  f = await startRealFleet(["jupyterlab"], {
    nodeName: NODE,
    // The test runs the reclaim passes itself (below).
    workerReclaim: false,
    operatorActivityIntervalMs: 2_000,
    operatorUsageIntervalMs: 5_000,
    gpuMetricsIntervalMs: 2_000,
    gatewayActivityIntervalMs: 2_000,
  });
});

afterAll(async () => {
  await f?.stop();
});

/** A cell through the gateway; resolves with its frames once the kernel is idle again. */
function runCell(cr: string, kernel: string, cookie: string, code: string): Promise<string[]> {
  const id = `cell-${Date.now()}-${Math.random().toString(36).slice(2, 6)}`;
  return gatewayOf(f)
    .converse(
      `/proxy/${cr}/api/kernels/${kernel}/channels`,
      cookie,
      (ws) => ws.send(executeRequest(code, id)),
      (all) =>
        all.some((x) => {
          const m = JSON.parse(x);
          return m.parent_header?.msg_id === id && m.msg_type === "status" && m.content?.execution_state === "idle";
        }),
      120_000,
    )
    .then((frames) => {
      const error = replyTo(frames, id, ["error"]);
      if (error) throw new Error(`the cell failed: ${error.content.ename}: ${error.content.evalue}`);
      return frames
        .map((x) => JSON.parse(x))
        .filter((m) => m.parent_header?.msg_id === id && ["stream", "execute_result"].includes(m.msg_type))
        .map((m) => m.content.text ?? m.content.data?.["text/plain"])
        .join("");
    })
    .then((out) => [out]);
}

const openLab = (id: string, cr: string) => openLabIn(f, f.bed.alice, id, cr);

/** GPUs held by pods on the real node (requests of pods not finished). */
async function gpusInUse(): Promise<number> {
  const k = new HttpKube(kubeConfigFrom(f.bed.fleet.cluster("gpu-b").kubeconfig));
  try {
    const pods = await k.json<{ items: any[] }>("GET", `/api/v1/pods?fieldSelector=spec.nodeName%3D${NODE}`);
    return pods.items
      .filter((p) => !["Succeeded", "Failed"].includes(p.status?.phase))
      .flatMap((p) => p.spec.containers)
      .reduce((n: number, c: any) => n + Number(c.resources?.requests?.["nvidia.com/gpu"] ?? 0), 0);
  } finally {
    k.close();
  }
}

/** The Session's Kubernetes Events on the management cluster, oldest first. */
async function sessionEvents(
  namespace: string,
  cr: string,
): Promise<{ type: string; reason: string; message: string }[]> {
  const k = new HttpKube(kubeConfigFrom(f.bed.fleet.cluster("mgmt").kubeconfig));
  try {
    const r = await k.json<{ items: any[] }>("GET", `/api/v1/namespaces/${namespace}/events`, {
      query: { fieldSelector: `involvedObject.kind=Session,involvedObject.name=${cr}` },
    });
    return r.items
      .sort((a, b) => String(a.metadata.creationTimestamp).localeCompare(String(b.metadata.creationTimestamp)))
      .map((e) => ({ type: e.type, reason: e.reason, message: e.message }));
  } finally {
    k.close();
  }
}

async function charged(sessionId: string): Promise<bigint> {
  const rows = (await f.bed.t.database
    .db("ledger_transactions")
    .where({ session_id: sessionId, kind: "charge" })
    .select("amount")) as { amount: string }[];
  return rows.reduce((n, r) => n + BigInt(r.amount), 0n);
}

describe.skipIf(!can.ok)(
  `an idle real JupyterLab is warned, then paused${can.ok ? "" : ` (skipped: ${can.reason})`}`,
  () => {
    it("busy while a cell runs, then idle: warned twice (notification, Event), paused, resumed with its file", async () => {
      const bed = f.bed;
      const alice = bedApi(bed, bed.alice);
      const vol = await alice.call("createVolume", { body: { name: "idle-work", size_gb: 1 } });
      const created = await alice.call("createSession", {
        body: {
          offering: "l4",
          preset: REAL_PRESET,
          image: f.images.jupyterlab?.name as string,
          volumes: [{ volume: vol.id }],
        },
      });
      const id = created.id;
      const running = await bed.waitFor(bed.alice, id, (s) => s.phase === "Running", "Running", 420_000);
      const cr = running.resource_name as string;
      const namespace = ((await bed.t.database.db("sessions").where({ id }).first()) as any).namespace as string;
      const pod = await podOf(f, cr);
      expect(pod.spec.nodeName).toBe(NODE);
      // The stand-in exporter's reading for the pod's card: 0 %, as an unused card reads.
      f.exporter?.setContainer(
        {
          pod: cr,
          namespace: pod.metadata.namespace,
          container: pod.spec.containers[0].name,
          uuid: f.cards[0] as string,
        },
        { util: 0, memUsedMiB: 0 },
      );

      let lab = await openLab(id, cr);
      expect(
        (
          await runCell(
            cr,
            lab.kernel,
            lab.cookie,
            "open('/home/jovyan/work/kept.txt','w').write('written before the idle pause'); print('ok')",
          )
        )[0]?.trim(),
      ).toBe("ok");

      // All three signals known (the API's view at the wall clock): the rule counts.
      const idleView = () => alice.call("getSessionIdle", { params: { sessionId: id } });
      await expect.poll(async () => (await idleView()).state, { timeout: 60_000, interval: 1_000 }).toBe("counting");
      expect((await idleView()).signals).toMatchObject({
        gpu: { state: "known", last_active_at: null },
        traffic: { state: "known" },
        notebook: { state: "known" },
      });

      // The worker's reclaim loop, its clock `ahead` of the wall clock.
      let ahead = 0;
      const kube = new HttpKube(bed.workerKubeConfig, { userAgent: "berth-worker" });
      const loop = reclaimWorkerLoop({
        db: bed.workerDb,
        kube,
        log: pino({ level: "silent" }),
        clock: { now: () => new Date(Date.now() + ahead) },
        staleMs: 3 * 60 * MIN,
      });
      const row = async () => (await bed.t.database.db("session_activity").where({ session_id: id }).first()) as any;
      try {
        // A cell that runs for 40 s: the person's last act is the frame that started it.
        const sentAt = Date.now();
        const cell = runCell(cr, lab.kernel, lab.cookie, "import time; time.sleep(40); print('done')");
        // Jupyter says busy (read at the pod, not through the gateway, which would count as traffic) ...
        await expect
          .poll(
            async () => {
              const r = await fetch(`http://${pod.status.podIP}:8888/proxy/${cr}/api/kernels/${lab.kernel}`);
              return ((await r.json()) as any).execution_state;
            },
            { timeout: 20_000, interval: 500 },
          )
          .toBe("busy");
        // ... and the operator's probes carry it: the notebook's activity moves on while the cell runs.
        await expect
          .poll(async () => Date.parse((await row())?.notebook_active_at ?? "0") - sentAt, {
            timeout: 30_000,
            interval: 500,
          })
          .toBeGreaterThan(15_000);
        // A pass 44 minutes ahead while busy: the stretch starts at the busy probe, nothing is due.
        ahead = 44 * MIN;
        const busyPass = await loop.pass();
        expect(busyPass.warned).toEqual([]);
        expect(busyPass.paused).toEqual([]);
        expect((await alice.call("getSession", { params: { sessionId: id } })).idle_warning).toBeNull();
        expect((await cell)[0]?.trim()).toBe("done");
        const cellEnded = Date.now();

        // Idle now: the stretch starts where the kernel last did something (its end), past the person's frame.
        await expect
          .poll(async () => (await row())?.notebook_seen_at && Date.parse((await row()).notebook_seen_at) > cellEnded, {
            timeout: 30_000,
            interval: 500,
          })
          .toBe(true);
        ahead = 0;
        const view = await idleView();
        expect(view.state).toBe("counting");
        const since = Date.parse(view.since ?? "");
        expect(since).toBeGreaterThan(sentAt + 30_000);
        expect(since).toBeLessThanOrEqual(cellEnded + 2_000);
        expect(Date.parse(view.signals.notebook.last_active_at ?? "")).toBe(since);
        expect(Date.parse(view.signals.traffic.last_active_at ?? "")).toBeLessThan(sentAt + 20_000);

        // 45 minutes into the stretch: the first warning (15 minutes ahead).
        const at = (m: number) => {
          ahead = since + m * MIN + 10_000 - Date.now();
        };
        at(45);
        expect((await loop.pass()).warned).toEqual([{ session: id, kind: "idle", minutesBefore: 15 }]);
        const warned = await alice.call("getSession", { params: { sessionId: id } });
        expect(warned.phase).toBe("Running");
        expect(warned.idle_warning).toEqual({
          since: new Date(since).toISOString(),
          deadline: new Date(since + 60 * MIN).toISOString(),
        });
        at(55);
        expect((await loop.pass()).warned).toEqual([{ session: id, kind: "idle", minutesBefore: 5 }]);
        const notes = await bed.t.database.db("notifications").where({ user_id: bed.alice.id }).orderBy("id");
        expect(notes.filter((n: any) => n.kind === "session.idle_warning").map((n: any) => n.title)).toEqual([
          "Idle session will be paused in 15 min",
          "Idle session will be paused in 5 min",
        ]);
        await expect
          .poll(async () => (await sessionEvents(namespace, cr)).filter((e) => e.reason === "IdleWarning").length, {
            timeout: 20_000,
          })
          .toBe(2);
        // Both warnings land within one second of the apiserver's clock, and creationTimestamp has whole
        // seconds: their order in the list is not theirs, so they are compared as a set.
        const deadlineText = new Date(since + 60 * MIN).toISOString();
        const idleWarnings = (await sessionEvents(namespace, cr)).filter((e) => e.reason === "IdleWarning");
        expect(idleWarnings.map((e) => e.type)).toEqual(["Warning", "Warning"]);
        expect(idleWarnings.map((e) => e.message).sort()).toEqual([
          `idle: will be paused at ${deadlineText} (in 15 min) unless it is used`,
          `idle: will be paused at ${deadlineText} (in 5 min) unless it is used`,
        ]);

        // The deadline: paused through the sessions domain, reason Idle.
        expect(await gpusInUse()).toBe(1);
        const decided = Date.now();
        const decidedSecond = Math.floor(decided / 1000) * 1000;
        at(60);
        expect((await loop.pass()).paused).toEqual([{ session: id, reason: "Idle" }]);
        const paused = await bed.waitFor(bed.alice, id, (s) => s.phase === "Paused", "Paused", 120_000);
        expect(paused.reason).toBe("Idle");
        await expect.poll(() => podOf(f, cr), { timeout: 60_000, interval: 500 }).toBeUndefined();
        const goneAt = Date.now();
        expect(await gpusInUse()).toBe(0);
        await expect(
          fetch(`http://${pod.status.podIP}:8888/proxy/${cr}/api`, { signal: AbortSignal.timeout(2_000) }),
        ).rejects.toThrow();
        expect((await sessionEvents(namespace, cr)).map((e) => e.reason)).toContain("Idle");
        expect(
          (await bed.t.database.db("notifications").where({ user_id: bed.alice.id, kind: "session.paused" })).map(
            (n: any) => n.data.reason,
          ),
        ).toEqual(["idle"]);
        // The volume stays.
        // Answered is kept: a volume gone is refused (404).
        await alice.call("getVolume", { params: { volumeId: vol.id } });
        // Billing stops with the container: the last sample ends between the pause and the pod's end, and
        // the charge is the covered seconds at the offering's rate, nothing more.
        const usageOf = () => alice.call("getSessionUsage", { params: { sessionId: id } });
        await expect
          // Samples are timed in whole seconds: the one that ends the run may end in the second of the decision.
          .poll(async () => Date.parse((await usageOf()).series.at(-1)?.end ?? "0") >= decidedSecond, {
            timeout: 60_000,
          })
          .toBe(true);
        const usage = await usageOf();
        const series = usage.series;
        const lastEnd = Date.parse(series.at(-1)?.end as string);
        expect(lastEnd).toBeLessThanOrEqual(goneAt);
        for (let i = 1; i < series.length; i++) expect(series[i]?.start).toBe(series[i - 1]?.end);
        const span = (lastEnd - Date.parse(series[0]?.start as string)) / 1000;
        expect(usage.totals.gpu_seconds).toBeCloseTo(span, 2);
        const rate = BigInt(paused.hourly_credit_rate);
        await expect
          .poll(() => charged(id), { timeout: 30_000 })
          .toBe((rate * BigInt(Math.round(usage.totals.gpu_seconds * 1000))) / 3_600_000n);
        console.log(
          `[real idle] usage ${usage.totals.gpu_seconds.toFixed(3)} GPU-s, last sample ends ${((goneAt - lastEnd) / 1000).toFixed(1)} s before the pod was seen gone, ${((lastEnd - decided) / 1000).toFixed(1)} s after the pause was decided`,
        );
      } finally {
        await loop.stop();
        kube.close();
      }

      // Resume: a new pod reads the file written before the pause.
      // Answered means accepted: the contract gives resume one success, 202 (api/openapi.json).
      await alice.call("resumeSession", { params: { sessionId: id } });
      await bed.waitFor(bed.alice, id, (s) => s.phase === "Running", "Running again", 420_000);
      const again = await podOf(f, cr);
      expect(again.metadata.uid).not.toBe(pod.metadata.uid);
      lab = await openLab(id, cr);
      expect(
        (await runCell(cr, lab.kernel, lab.cookie, "print(open('/home/jovyan/work/kept.txt').read())"))[0]?.trim(),
      ).toBe("written before the idle pause");
    });
  },
);
