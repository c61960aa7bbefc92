// biome-ignore-all lint/suspicious/noExplicitAny: journeys read the API's JSON as it comes
// The researcher's journey for real: a JupyterLab session on the bed's real node (a kubelet and containerd on
// this host pulled the image from the bed's registry) is Running once JupyterLab answers its readiness probe;
// through gpu-b's gateway (dialling the pod's own address) a kernel runs 21*2 over its WebSocket and
// answers 42; the pod's logs are JupyterLab's own stdout; a file written from a cell into the CSI volume
// outlives a pause (the container stops, the GPU is free) and a resume, and the logs are then the new pod's;
// the operator's idle-rule prober reads the real Jupyter; a web terminal runs a typed command; the code
// editor's workbench loads; and Chromium renders the Lab through the connect link. One fleet for the file;
// the real node goes in afterAll.
//
// Needs root and containerd (e2e/src/testbed/real-node/can-run.ts); skipped with its reason elsewhere.
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bedApi } from "../api-client.ts";
import { closeBrowser, launchBrowser, newContext, Screenshots } from "../console/browser.ts";
import { canRunRealNode } from "../testbed/real-node/index.ts";
import {
  executeRequest,
  gatewayOf,
  openLab as openLabIn,
  podOf,
  REAL_NODE,
  REAL_PRESET,
  type RealFleet,
  runCell,
  startRealFleet,
} from "./real-fleet.ts";

vi.setConfig({ testTimeout: 240_000, hookTimeout: 900_000 });

const can = canRunRealNode();
let f: RealFleet;
let browser: Browser | undefined;
const shots = new Screenshots("real-journey");

beforeAll(async () => {
  if (!can.ok) return;
  f = await startRealFleet(["jupyterlab", "terminal", "code"], {
    operatorActivityIntervalMs: 2_000,
    operatorUsageIntervalMs: 5_000,
  });
});

afterAll(async () => {
  await closeBrowser(browser);
  await f?.stop();
});

/** Runs `code` in a kernel through the gateway (real-fleet.ts): the execute_result's text (or stream output). */
const run = (cr: string, kernel: string, cookie: string, code: string) => runCell(f, cr, { cookie, kernel }, code);
const openLab = (id: string, cr: string) => openLabIn(f, f.bed.alice, id, cr);

/** The GPUs pods on the real node hold (requests of pods not finished). */
async function gpusInUse(): Promise<number> {
  const { KubeHttp } = await import("../testbed/kube.ts");
  const c = f.bed.fleet.cluster("gpu-b");
  const k = new KubeHttp({ server: c.server, caPem: c.caPem, token: c.adminToken });
  try {
    const pods = await k.json<{ items: any[] }>("GET", `/api/v1/pods?fieldSelector=spec.nodeName%3D${REAL_NODE}`);
    return pods.items
      .filter((p) => !["Succeeded", "Failed"].includes(p.status?.phase))
      .flatMap((p) => p.spec.containers)
      .reduce((n: number, c: any) => n + Number(c.resources?.requests?.["nvidia.com/gpu"] ?? 0), 0);
  } finally {
    k.close();
  }
}

describe.skipIf(!can.ok)(
  `a researcher runs a cell in a real JupyterLab${can.ok ? "" : ` (skipped: ${can.reason})`}`,
  () => {
    let id = "";
    let cr = "";
    let lab: { cookie: string; kernel: string };

    it("creates a JupyterLab session with a volume; it is Running on the real node only once JupyterLab answers", async () => {
      const alice = bedApi(f.bed, f.bed.alice);
      const vol = await alice.call("createVolume", { body: { name: "work", size_gb: 1 } });
      const created = await alice.call("createSession", {
        body: {
          offering: "l4",
          preset: REAL_PRESET,
          image: f.images.jupyterlab?.name as string,
          volumes: [{ volume: vol.id }],
        },
      });
      id = created.id;
      const running = await f.bed.waitFor(f.bed.alice, id, (s) => s.phase === "Running", "Running", 180_000);
      cr = running.resource_name;
      const pod = await podOf(f, cr);
      expect(pod.spec.nodeName).toBe(REAL_NODE);
      expect(pod.spec.containers[0].image).toBe(f.images.jupyterlab?.ref);
      expect(pod.spec.containers[0].readinessProbe.httpGet).toMatchObject({ path: `/proxy/${cr}/api`, port: "http" });
      expect(pod.status.containerStatuses[0]).toMatchObject({ ready: true, state: { running: expect.anything() } });
      // Ready came from the app: it answers at the pod's own address, which the host reaches.
      const direct = await fetch(`http://${pod.status.podIP}:8888/proxy/${cr}/api`);
      expect(direct.status).toBe(200);
      expect((await direct.json()).version).toMatch(/^\d+\./);
    });

    it("opens it through the gateway and runs 21*2 in a kernel over its WebSocket: 42", async () => {
      lab = await openLab(id, cr);
      expect(await run(cr, lab.kernel, lab.cookie, "21*2")).toBe("42");
    });

    it("the operator's idle-rule prober reads the real Jupyter: its notebook signal is known, and busy while a cell runs", async () => {
      const row = async () =>
        (await f.bed.t.database.db("session_activity").where({ session_id: id }).first()) as any | undefined;
      await expect.poll(async () => (await row())?.notebook_state, { timeout: 30_000, interval: 500 }).toBe("ok");
      // A busy kernel is activity now: the probe's own time becomes the notebook's latest activity.
      const gw = gatewayOf(f);
      const cellId = `busy-${Date.now()}`;
      const busyFrom = Date.now();
      const busy = gw.converse(
        `/proxy/${cr}/api/kernels/${lab.kernel}/channels`,
        lab.cookie,
        (ws) => ws.send(executeRequest("import time; time.sleep(8)", cellId)),
        (all) =>
          all.some((x) => {
            const m = JSON.parse(x);
            return m.parent_header?.msg_id === cellId && m.content?.execution_state === "idle";
          }),
      );
      await expect
        .poll(async () => Date.parse((await row())?.notebook_active_at ?? "0") >= busyFrom, {
          timeout: 30_000,
          interval: 500,
        })
        .toBe(true);
      await busy.catch(() => undefined);
    });

    it("the pod's logs through the API are JupyterLab's own stdout", async () => {
      const logs = await bedApi(f.bed, f.bed.alice).call("getSessionLogs", {
        params: { sessionId: id },
        query: { tail: 200 },
      });
      const lines = logs.lines;
      // From the server's start-up banner (its base path in the URL) to the kernel this journey started.
      // (Cut short while every real node's kubelet shared /var/log/pods: e2e/src/testbed/real-node/config.ts.)
      expect(lines.join("\n")).toMatch(/Jupyter Server .* is running at/);
      expect(lines.join("\n")).toContain(`/proxy/${cr}/`);
      expect(lines.join("\n")).toContain(`Kernel started: ${lab.kernel}`);
    });

    it("writes a file into the mounted volume from a cell, pauses (the container stops, the GPU is free), resumes and reads it back", async () => {
      const written = await run(
        cr,
        lab.kernel,
        lab.cookie,
        "import os; open('/home/jovyan/work/kept.txt','w').write('written before the pause'); print(os.getuid(), os.getgid())",
      );
      expect(written.trim()).toBe("1000 100");
      const before = await podOf(f, cr);
      expect(await gpusInUse()).toBe(1);
      const alice = bedApi(f.bed, f.bed.alice);
      // Answered means accepted: the contract gives pause and resume one success, 202 (api/openapi.json).
      await alice.call("pauseSession", { params: { sessionId: id } });
      await f.bed.waitFor(f.bed.alice, id, (s) => s.phase === "Paused", "Paused", 120_000);
      await expect.poll(() => podOf(f, cr), { timeout: 60_000, interval: 500 }).toBeUndefined();
      expect(await gpusInUse()).toBe(0);
      // The container really stopped: nothing answers at its address any more.
      await expect(
        fetch(`http://${before.status.podIP}:8888/proxy/${cr}/api`, { signal: AbortSignal.timeout(2_000) }),
      ).rejects.toThrow();

      await alice.call("resumeSession", { params: { sessionId: id } });
      await f.bed.waitFor(f.bed.alice, id, (s) => s.phase === "Running", "Running again", 180_000);
      lab = await openLab(id, cr);
      expect(await run(cr, lab.kernel, lab.cookie, "open('/home/jovyan/work/kept.txt').read()")).toBe(
        "'written before the pause'",
      );
      // The logs are the resumed pod's: its new kernel's start is there.
      const logs = await alice.call("getSessionLogs", { params: { sessionId: id }, query: { tail: 200 } });
      expect(logs.lines.join("\n")).toContain(`Kernel started: ${lab.kernel}`);
    });

    it("Chromium renders the Lab through the connect link", async () => {
      browser = await launchBrowser();
      const context = await newContext(browser, f.bed.t.api.url);
      try {
        const page = await context.newPage();
        const links = await bedApi(f.bed, f.bed.alice).call("getSessionConnectLinks", { params: { sessionId: id } });
        await page.goto(links.links.lab);
        await page.waitForURL((u) => u.pathname === `/proxy/${cr}/lab` && !u.searchParams.has("svc_cnx"), {
          timeout: 60_000,
        });
        await page.locator("#jp-main-dock-panel").waitFor({ timeout: 120_000 });
        await page.locator(".jp-LauncherCard").first().waitFor({ timeout: 120_000 });
        console.log(`[real journey] screenshot: ${await shots.take(page, "jupyterlab-through-the-gateway")}`);
        expect(await page.title()).toContain("JupyterLab");
      } finally {
        await context.close();
      }
    });

    it("a web terminal session runs a command typed over its WebSocket through the gateway", async () => {
      // The JupyterLab holds one of the node's two cards; the terminal takes the other.
      const t = await f.bed.startRunning(
        f.bed.alice,
        { offering: "l4", preset: REAL_PRESET, image: f.images.terminal?.name },
        180_000,
      );
      const tcr = t.resource_name;
      expect((await podOf(f, tcr)).spec.nodeName).toBe(REAL_NODE);
      const gw = gatewayOf(f);
      const links = await bedApi(f.bed, f.bed.alice).call("getSessionConnectLinks", { params: { sessionId: t.id } });
      const cookie = await gw.signIn(links.links.terminal);
      // The link's own page, as a browser opens it.
      const page = await gw.open(`${gw.url}/proxy/${tcr}/terminal`, { cookie });
      expect(page.status).toBe(200);
      expect(page.body).toContain("xterm");
      const frames = await gw.converse(
        `/proxy/${tcr}/websocket`,
        cookie,
        (ws) => {
          ws.send(JSON.stringify(["set_size", 24, 80, 480, 800]));
          ws.send(JSON.stringify(["stdin", "echo answer=$((6*7)) on $(hostname)\r"]));
        },
        (all) => all.join("").includes("answer=42 on"),
      );
      const out = frames
        .map((x) => JSON.parse(x) as [string, string])
        .filter(([k]) => k === "stdout")
        .map(([, d]) => d)
        .join("");
      expect(out).toContain(`answer=42 on ${tcr}`);
      // Answered means accepted: the contract gives terminate one success, 202 (api/openapi.json).
      await bedApi(f.bed, f.bed.alice).call("terminateSession", { params: { sessionId: t.id } });
      await expect.poll(() => podOf(f, tcr), { timeout: 60_000, interval: 500 }).toBeUndefined();
    });

    it("the code editor's workbench page loads through the gateway", async () => {
      const c = await f.bed.startRunning(
        f.bed.alice,
        { offering: "l4", preset: REAL_PRESET, image: f.images.code?.name },
        240_000,
      );
      const ccr = c.resource_name;
      const gw = gatewayOf(f);
      const links = await bedApi(f.bed, f.bed.alice).call("getSessionConnectLinks", { params: { sessionId: c.id } });
      const cookie = await gw.signIn(links.links.code);
      // The link's path; code-server sends its root on to its folder (a redirect under it); a browser follows.
      let url = `${gw.url}/proxy/${ccr}/code/`;
      let page = await gw.open(url, { cookie });
      for (let hops = 0; page.status >= 300 && page.status < 400 && hops < 3; hops++) {
        url = new URL(page.headers.location as string, url).toString();
        expect(new URL(url).pathname.startsWith(`/proxy/${ccr}/code/`), url).toBe(true);
        page = await gw.open(url, { cookie });
      }
      expect(page.status).toBe(200);
      expect(page.body).toContain("workbench");
      const asset = /(?:src|href)="((?:\.\.?\/)[^"?]+\.(?:js|css)[^"]*)"/.exec(page.body)?.[1];
      expect(asset, page.body.slice(-3000)).toBeDefined();
      const script = await gw.open(new URL(asset as string, url).toString(), { cookie });
      expect(script.status).toBe(200);
    });
  },
);
