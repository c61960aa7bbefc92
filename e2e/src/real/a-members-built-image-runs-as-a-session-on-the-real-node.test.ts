// biome-ignore-all lint/suspicious/noExplicitAny: journeys read the API's JSON as it comes
// Journey: a member builds an image with Berth's builder and runs it as a Berth session. gpu-b is the fleet's
// build cluster (real-fleet.ts `builds`): the member's Dockerfile, on the catalog's JupyterLab
// (`base_image`, ARG BASE_IMAGE), is built by rootless BuildKit as a Job on the real node and pushed to
// Berth's registry; the image turns ready in the catalog; a session created from it through the API lands on
// the real node, the kubelet pulls it from Berth's registry, JupyterLab answers its readiness probe, and
// through gpu-b's gateway a kernel reads the file the build wrote; the session pauses and is charged for
// the seconds its container held the card. A second session of the same image starts warm. A build that
// failed, or an image that does not exist, is refused with the contract's envelope.
//
// Needs root and containerd (e2e/src/testbed/real-node/can-run.ts); skipped with its reason elsewhere.
import { execFileSync } from "node:child_process";
import type { ResponseOf } from "@berth/console/client";
import { HttpKube } from "@berth/controllers/kube";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { apiAs, bedApi, refusalOf } from "../api-client.ts";
import { kubeConfigFrom } from "../testbed/kubeconfig.ts";
import { canRunRealNode } from "../testbed/real-node/index.ts";
import { eventually } from "../testbed/waiting.test-support.ts";
import {
  executeRequest,
  gatewayOf,
  podOf,
  REAL_PRESET,
  type RealFleet,
  replyTo,
  startRealFleet,
} from "./real-fleet.ts";

vi.setConfig({ testTimeout: 900_000, hookTimeout: 1_800_000 });

const NODE = "gpu-b-real-build";
const can = canRunRealNode();
let f: RealFleet;
const figures: string[] = [];

beforeAll(async () => {
  if (!can.ok) return;
  f = await startRealFleet(["jupyterlab"], { nodeName: NODE, builds: true, operatorUsageIntervalMs: 5_000 });
});

afterAll(async () => {
  await f?.stop();
  if (figures.length > 0) console.log(`[built image sessions]\n${figures.join("\n")}`);
});

async function charged(sessionId: string): Promise<bigint> {
  const rows = (await f.bed.t.database
    .db("ledger_transactions")
    .where({ session_id: sessionId, kind: "charge" })
    .select("amount")) as { amount: string }[];
  return rows.reduce((n, r) => n + BigInt(r.amount), 0n);
}

/** A member's build through the API, to its end; the build as the API shows it then. */
async function build(dockerfile: string, name: string): Promise<ResponseOf<"getImageBuild">> {
  // Starting answers 200 for a build already there: this one must be a new build (202).
  let started = 0;
  const r = await apiAs(f.bed.t.api.url, f.bed.alice.token, (res) => {
    started = res.status;
  }).call("createImageBuild", {
    body: { dockerfile, name, tag: "1", base_image: f.images.jupyterlab?.name as string, kind: "jupyterlab" },
  });
  expect(started, JSON.stringify(r)).toBe(202);
  return eventually(
    async () => {
      const b = await bedApi(f.bed, f.bed.alice).call("getImageBuild", { params: { id: r.id } });
      return ["queued", "running"].includes(b.state) ? undefined : b;
    },
    { what: `build ${r.id} finished`, timeoutMs: 600_000, intervalMs: 1_000 },
  );
}

/** Images in the node's containerd (the kubelet's namespace). */
function nodeImages(): string[] {
  return execFileSync("ctr", ["-a", f.node.layout.containerdSocket, "-n", "k8s.io", "images", "ls", "-q"], {
    encoding: "utf8",
  })
    .split("\n")
    .filter(Boolean);
}

/** Creates a session of `image`; the seconds from the create to Running, and the kubelet's pull message. */
async function createRunning(image: string): Promise<{ id: string; cr: string; seconds: number; pulled?: string }> {
  const t0 = performance.now();
  const created = await bedApi(f.bed, f.bed.alice).call("createSession", {
    body: { offering: "l4", preset: REAL_PRESET, image },
  });
  const running = await f.bed.waitFor(
    f.bed.alice,
    created.id,
    (s) => s.phase === "Running" || s.phase === "Failed",
    "Running",
    // A cold pull of 139 MB took 97–223 s on this machine under load.
    600_000,
  );
  const seconds = (performance.now() - t0) / 1000;
  expect(running.phase, JSON.stringify(running)).toBe("Running");
  const cr = running.resource_name as string;
  const k = new HttpKube(kubeConfigFrom(f.bed.fleet.cluster("gpu-b").kubeconfig));
  try {
    const events = await k.json<{ items: any[] }>("GET", "/api/v1/namespaces/berth-sessions/events", {
      query: { fieldSelector: `involvedObject.name=${cr}` },
    });
    const pulled = events.items.find((e) => e.reason === "Pulled")?.message as string | undefined;
    return { id: created.id, cr, seconds, ...(pulled ? { pulled } : {}) };
  } finally {
    k.close();
  }
}

describe.skipIf(!can.ok)(
  `a member's built image runs as a Berth session on the real node${can.ok ? "" : ` (skipped: ${can.reason})`}`,
  () => {
    let imageId = "";
    let reference = "";

    it("the member's Dockerfile is built on the real node, and its image is ready in the catalog", async () => {
      const t0 = performance.now();
      const done = await build(
        "ARG BASE_IMAGE\nFROM $BASE_IMAGE\nRUN echo built by a member > /home/jovyan/built.txt\n",
        "my-lab",
      );
      if (done.state !== "succeeded") {
        const logs = await fetch(`${f.bed.t.api.url}/api/v1/image-builds/${done.id}/logs`, {
          headers: { Authorization: `Bearer ${f.bed.alice.token}` },
        }).then((r) => r.text());
        expect.fail(`${JSON.stringify(done)}\n${logs.slice(-4000)}`);
      }
      figures.push(
        `build on the real node (JupyterLab base + one RUN): ${((performance.now() - t0) / 1000).toFixed(1)} s`,
      );
      imageId = done.image_id;
      const image = await bedApi(f.bed, f.bed.alice).call("getImage", { params: { name: imageId } });
      reference = image.image;
      // Berth's registry under the name the node's pods and its kubelet use, by digest.
      expect(reference).toMatch(new RegExp(`^${(f.relay?.host ?? "").replace(/\./g, "\\.")}/.+@${done.digest}$`));
    });

    it("a session of it lands on the real node, JupyterLab answers through the gateway with the build's file; paused and charged", async () => {
      // Cold: nothing of it or its base on the node yet.
      for (const ref of nodeImages().filter((r) => r.includes("/sessions/") || r.includes("my-lab")))
        execFileSync("ctr", ["-a", f.node.layout.containerdSocket, "-n", "k8s.io", "images", "rm", ref], {
          stdio: "ignore",
        });
      const s = await createRunning(imageId);
      figures.push(`create → Running, built image, cold pull: ${s.seconds.toFixed(1)} s (kubelet: ${s.pulled ?? "?"})`);
      const pod = await podOf(f, s.cr);
      expect(pod.spec.nodeName).toBe(NODE);
      expect(pod.spec.containers[0].image).toBe(reference);
      expect(pod.status.containerStatuses[0]).toMatchObject({ ready: true, state: { running: expect.anything() } });

      // Through gpu-b's gateway: the connect link, JupyterLab's API, a kernel reading the build's file.
      const gw = gatewayOf(f);
      const alice = bedApi(f.bed, f.bed.alice);
      const links = await alice.call("getSessionConnectLinks", { params: { sessionId: s.id } });
      const cookie = await gw.signIn(links.links.lab);
      const api = await gw.open(`${gw.url}/proxy/${s.cr}/api`, { cookie });
      expect(api.status).toBe(200);
      expect(JSON.parse(api.body).version).toMatch(/^\d+\./);
      const page = await gw.open(`${gw.url}/proxy/${s.cr}/lab`, { cookie });
      expect(page.status).toBe(200);
      const xsrf = /_xsrf=([^;]+)/.exec(String(page.headers["set-cookie"] ?? ""))?.[1] ?? "";
      const withXsrf = `${cookie}; _xsrf=${xsrf}`;
      const kernel = await gw.open(
        `${gw.url}/proxy/${s.cr}/api/kernels`,
        { cookie: withXsrf, "x-xsrftoken": xsrf, "content-type": "application/json" },
        "POST",
        JSON.stringify({ name: "python3" }),
      );
      expect(kernel.status, kernel.body).toBe(201);
      const msg = `read-${Date.now()}`;
      const frames = await gw.converse(
        `/proxy/${s.cr}/api/kernels/${JSON.parse(kernel.body).id}/channels`,
        withXsrf,
        (ws) => ws.send(executeRequest("open('/home/jovyan/built.txt').read()", msg)),
        (all) => replyTo(all, msg, ["execute_result", "error"]) !== undefined,
      );
      expect(replyTo(frames, msg, ["execute_result"])?.content.data["text/plain"]).toBe("'built by a member\\n'");

      // Paused: the pod goes, and the charge is the seconds the container held the card.
      // Answered means accepted: the contract gives pause one success, 202 (api/openapi.json).
      await alice.call("pauseSession", { params: { sessionId: s.id } });
      const paused = await f.bed.waitFor(f.bed.alice, s.id, (x) => x.phase === "Paused", "Paused", 120_000);
      await expect.poll(() => podOf(f, s.cr), { timeout: 60_000, interval: 500 }).toBeUndefined();
      const usageOf = () => alice.call("getSessionUsage", { params: { sessionId: s.id } });
      await expect.poll(async () => (await usageOf()).totals.samples, { timeout: 60_000 }).toBeGreaterThan(0);
      const seconds = (await usageOf()).totals.gpu_seconds;
      expect(seconds).toBeGreaterThan(0);
      const rate = BigInt(paused.hourly_credit_rate);
      expect(rate).toBeGreaterThan(0n);
      await expect
        .poll(() => charged(s.id), { timeout: 30_000 })
        .toBe((rate * BigInt(Math.round(seconds * 1000))) / 3_600_000n);
    });

    it("a second session of the same image starts warm (the image is on the node)", async () => {
      expect(nodeImages().some((r) => reference.startsWith(r.split("@")[0] as string))).toBe(true);
      const s = await createRunning(imageId);
      figures.push(`create → Running, built image, warm: ${s.seconds.toFixed(1)} s (kubelet: ${s.pulled ?? "?"})`);
      expect((await podOf(f, s.cr)).spec.nodeName).toBe(NODE);
      // Answered means accepted: the contract gives terminate one success, 202 (api/openapi.json).
      await bedApi(f.bed, f.bed.alice).call("terminateSession", { params: { sessionId: s.id } });
      await expect.poll(() => podOf(f, s.cr), { timeout: 60_000, interval: 500 }).toBeUndefined();
    });

    it("an image whose build failed, one that does not exist and someone else's are refused with the envelope", async () => {
      const failed = await build("ARG BASE_IMAGE\nFROM $BASE_IMAGE\nRUN exit 3\n", "broken-lab");
      expect(failed.state).toBe("failed");
      const session = (image: string, who = f.bed.alice) =>
        refusalOf(bedApi(f.bed, who).call("createSession", { body: { offering: "l4", preset: REAL_PRESET, image } }));
      const refused = await session(failed.image_id);
      expect(refused.status).toBe(400);
      expect(refused).toMatchObject({
        code: "validation_failed",
        details: {
          issues: [
            { path: ["body", "image"], message: expect.stringMatching(/^this image's build failed.*; it cannot run$/) },
          ],
        },
      });
      const missing = await session("img-doesnotexist");
      expect(missing.status).toBe(400);
      expect(missing).toMatchObject({
        code: "validation_failed",
        details: { issues: [{ path: ["body", "image"], message: "no such image" }] },
      });
      // Another member cannot run alice's image, nor learn how its build went.
      for (const id of [imageId, failed.image_id]) {
        const other = await session(id, f.bed.bob);
        expect(other.status).toBe(400);
        expect(other.details.issues).toEqual([
          expect.objectContaining({ path: ["body", "image"], message: "no such image" }),
        ]);
      }
      expect(
        (await f.bed.t.database.db("sessions").where({ owner_id: f.bed.bob.id })).length +
          (
            await f.bed.t.database
              .db("sessions")
              .where({ owner_id: f.bed.alice.id })
              .whereIn("image", [failed.image_id, "img-doesnotexist"])
          ).length,
      ).toBe(0);
    });
  },
);
