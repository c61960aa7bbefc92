// What a session costs the apiservers, counted by the apiservers themselves (apiserver_request_total,
// mutating verbs that succeeded: a 409 or a 404 changes nothing stored), on the bed's real clusters:
//   - dispatched (POST → Running): at most 4 writes of the session's objects on its GPU cluster (the mirror,
//     the pod, its binding and its status; no Service, Endpoints or EndpointSlice: the gateway follows the
//     pod's address from the operator), besides the scheduler's own Event that every pod gets;
//   - on the management cluster: at most 3 per dispatched session (the create, Running and the Started
//     Event: Starting is kept in the history row, not on the resource), and for a full lifecycle (create →
//     Running → pause → resume → terminate) exactly the four requests a person makes and, from the
//     controllers, one status write per state (Running, Paused, Running, Terminated) and four Events: 8
//     (docs/dev/sessions.md, "Writes to the management cluster");
// and `kubectl describe session` still tells the story: the Events it lists (by involvedObject, as kubectl
// asks) are Started, PausedByUser, Resumed, Terminated, in that order, each with a message.

import { sessionPath } from "@berth/crds";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bedApi } from "../api-client.ts";
import type { KubeHttp } from "../testbed/kube.ts";
import { until } from "../until.ts";
import { adminKube, type SessionsBed, startSessionsBed } from "./harness.ts";

vi.setConfig({ testTimeout: 300_000 });

/** Session objects on a GPU cluster; its Events (the scheduler's) are counted apart. */
const GPU_OBJECTS = [
  "sessionmirrors",
  "sessionmirrors/status",
  "pods",
  "pods/binding",
  "pods/status",
  "services",
  "endpoints",
  "endpointslices",
  "networkpolicies",
  "persistentvolumeclaims",
];
const MGMT_OBJECTS = ["sessions", "sessions/status", "events"];
const GPU_TARGET = 4;
const DISPATCH_MGMT_MAX = 3;
/** The controllers' writes per lifecycle: four status writes and four Events (the issue's target). */
const LIFECYCLE_CONTROLLERS_MAX = 8;
/** With the person's four requests (the create and three actions, each a write of the Session). */
const LIFECYCLE_MAX = 12;
const N = 2; // gpu-a's two H100s

let bed: SessionsBed;
let mk: KubeHttp;
let gks: KubeHttp[];

type Counts = Map<string, number>;
const MUTATING = new Set(["POST", "PUT", "PATCH", "DELETE", "APPLY"]);

/** Successful mutating requests the apiserver has served, by resource (and subresource). */
async function served(k: KubeHttp): Promise<Counts> {
  const text = (await k.raw("GET", "/metrics")).text;
  const out: Counts = new Map();
  for (const line of text.split("\n")) {
    if (!line.startsWith("apiserver_request_total{")) continue;
    const label = (name: string) => new RegExp(`${name}="([^"]*)"`).exec(line)?.[1] ?? "";
    if (!MUTATING.has(label("verb")) || !label("code").startsWith("2")) continue;
    const key = `${label("resource")}${label("subresource") ? `/${label("subresource")}` : ""}`;
    out.set(key, (out.get(key) ?? 0) + Number(line.split(" ").at(-1)));
  }
  return out;
}
async function servedAll(ks: KubeHttp[]): Promise<Counts> {
  const all: Counts = new Map();
  for (const k of ks) for (const [key, v] of await served(k)) all.set(key, (all.get(key) ?? 0) + v);
  return all;
}
const delta = (a: Counts, b: Counts, keys: string[]) =>
  Object.fromEntries(keys.map((k) => [k, (b.get(k) ?? 0) - (a.get(k) ?? 0)]).filter(([, v]) => (v as number) > 0));
const sum = (o: Record<string, number>) => Object.values(o).reduce((x, y) => x + y, 0);

/** Waits until the counted writes stop (the worker's Events trail its status writes a little). */
async function settled(): Promise<void> {
  let last = "";
  await until(
    "the writes to settle",
    async () => {
      const now = JSON.stringify([
        delta(new Map(), await served(mk), MGMT_OBJECTS),
        delta(new Map(), await servedAll(gks), GPU_OBJECTS),
      ]);
      const same = now === last;
      last = now;
      return same;
    },
    60_000,
    1_500,
  );
}

beforeAll(async () => {
  bed = await startSessionsBed();
  mk = adminKube(bed.fleet.cluster("mgmt"));
  gks = Object.values(bed.gpu).map((g) => adminKube(g.cluster));
});
afterAll(async () => {
  mk?.close();
  for (const k of gks ?? []) k.close();
  await bed?.stop();
});

describe("a session's writes to Kubernetes", () => {
  const ids: string[] = [];
  const crs: string[] = [];
  let m0: Counts;

  it(`are at most ${GPU_TARGET} on its GPU cluster and ${DISPATCH_MGMT_MAX} on the management cluster when it is dispatched`, async () => {
    await settled();
    m0 = await served(mk);
    const g0 = await servedAll(gks);
    for (let i = 0; i < N; i++) {
      const r = await bedApi(bed, bed.alice).call("createSession", {
        body: { offering: "h100", preset: "gpu-small", image: "jupyterlab" },
      });
      ids.push(r.id);
      crs.push(r.resource_name);
    }
    for (const id of ids) await bed.waitFor(bed.alice, id, (s) => s.phase === "Running", "Running", 120_000);
    await settled();
    // One reading for both, so the Events set apart are of the same moment as the objects.
    const g1 = await servedAll(gks);
    const gpu = delta(g0, g1, GPU_OBJECTS);
    const gpuEvents = delta(g0, g1, ["events"]);
    const mgmt = delta(m0, await served(mk), MGMT_OBJECTS);
    console.log(
      `per dispatched session: GPU cluster ${sum(gpu) / N} (${JSON.stringify(gpu)}; the scheduler's Events apart: ${JSON.stringify(gpuEvents)}), management ${sum(mgmt) / N} (${JSON.stringify(mgmt)})`,
    );
    expect(gpu.services ?? 0).toBe(0);
    expect(gpu.endpoints ?? 0).toBe(0);
    expect(gpu.endpointslices ?? 0).toBe(0);
    expect(gpu.sessionmirrors).toBe(N);
    expect(gpu.pods).toBe(N);
    expect(sum(gpu) / N).toBeLessThanOrEqual(GPU_TARGET);
    expect(sum(mgmt) / N).toBeLessThanOrEqual(DISPATCH_MGMT_MAX);
  });

  it(`are at most ${LIFECYCLE_CONTROLLERS_MAX} by the controllers (${LIFECYCLE_MAX} in all) on the management cluster for a whole lifecycle, and describe tells the story`, async () => {
    expect(ids).toHaveLength(N);
    const act = async (verb: "pauseSession" | "resumeSession" | "terminateSession", phase: string) => {
      for (const sessionId of ids) await bedApi(bed, bed.alice).call(verb, { params: { sessionId } });
      for (const id of ids) await bed.waitFor(bed.alice, id, (s) => s.phase === phase, phase, 120_000);
    };
    await act("pauseSession", "Paused");
    await act("resumeSession", "Running");
    await act("terminateSession", "Terminated");
    await settled();
    const life = delta(m0, await served(mk), MGMT_OBJECTS);
    console.log(`per lifecycle on the management cluster: ${sum(life) / N} (${JSON.stringify(life)})`);
    expect(life.sessions).toBe(N * 4); // the create and the three actions
    // One status write per state a person names; the interim phases never reach the resource.
    expect(life["sessions/status"]).toBe(N * 4);
    expect(life.events).toBe(N * 4);
    expect(((life["sessions/status"] ?? 0) + (life.events ?? 0)) / N).toBeLessThanOrEqual(LIFECYCLE_CONTROLLERS_MAX);
    expect(sum(life) / N).toBeLessThanOrEqual(LIFECYCLE_MAX);

    // What `kubectl describe session` lists under Events: the events whose involvedObject is the session.
    const s = await mk.json<{ metadata: { name: string; namespace: string; uid: string } }>(
      "GET",
      sessionPath(
        (await bedApi(bed, bed.alice).call("getSession", { params: { sessionId: ids[0] as string } })).namespace,
        crs[0],
      ),
    );
    const selector = encodeURIComponent(
      `involvedObject.name=${s.metadata.name},involvedObject.namespace=${s.metadata.namespace},involvedObject.uid=${s.metadata.uid}`,
    );
    const events = await mk.json<{
      items: { reason: string; message: string; metadata: { resourceVersion: string } }[];
    }>("GET", `/api/v1/namespaces/${s.metadata.namespace}/events?fieldSelector=${selector}`);
    // In the order they were stored (timestamps have whole seconds; a pause on kwok takes less).
    const story = events.items
      .sort((a, b) => Number(a.metadata.resourceVersion) - Number(b.metadata.resourceVersion))
      .map((e) => e.reason);
    expect(story).toEqual(["Started", "PausedByUser", "Resumed", "Terminated"]);
    for (const e of events.items) expect(e.message.length, e.reason).toBeGreaterThan(0);
  });
});
