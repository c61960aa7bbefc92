// biome-ignore-all lint/suspicious/noExplicitAny: journeys read the API's JSON as it comes
// `npm start`'s own process with its real node (only the data folder and ports differ): it says the session
// images are being built and goes on; once they are in the catalog, the demo researcher starts a JupyterLab
// with the image built here on gpu-b's L4 → it is Running on the real node (a real container from Berth's
// registry, through the relay) → its lab link opens through gpu-b's gateway → pause. Then Ctrl-C.
// Needs root and containerd (e2e/src/testbed/real-node/can-run.ts); skipped with its reason elsewhere.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HttpKube } from "@berth/controllers/kube";
import { cookieFrom, get } from "@berth/operator/gateway/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { fleetConfig } from "../../fleet.config.ts";
import { apiAs } from "../api-client.ts";
import { REAL_PRESET } from "../real/real-node-sessions.ts";
import { kubeConfigFrom } from "../testbed/kubeconfig.ts";
import { quietPorts } from "../testbed/ports.ts";
import { canRunRealNode } from "../testbed/real-node/index.ts";
import { until } from "../until.ts";
import { leftoversOf, stopNpmStart } from "./npm-start.test-support.ts";
import { IMAGES_READY } from "./real-sessions.ts";

// A cold build of the three session images takes about 15 minutes on this machine kind.
vi.setConfig({ testTimeout: 2_400_000, hookTimeout: 900_000 });

const can = canRunRealNode();
const root = join(import.meta.dirname, "..", "..", "..");
const dataDir = mkdtempSync(join(tmpdir(), "berth-npm-start-real-"));
const PASSWORD = "the demo's first password";
const REAL_NODE = fleetConfig.clusters.find((c) => c.name === "gpu-b")?.realNode?.name as string;
let child: ChildProcess | undefined;
let output = "";
let api = "";

const leftovers = () => leftoversOf(dataDir);

beforeAll(async () => {
  if (!can.ok) return;
  const first = await quietPorts(4);
  api = `http://127.0.0.1:${first}`;
  child = spawn(process.execPath, [join(root, "e2e/src/start/main.ts")], {
    cwd: root,
    env: {
      ...process.env,
      BERTH_DATA_DIR: dataDir,
      BERTH_API_PORT: String(first),
      BERTH_INTERNAL_PORT: String(first + 1),
      BERTH_GATEWAY_PORT: String(first + 2),
      BERTH_DEMO_PASSWORD: PASSWORD,
      BERTH_LOG_LEVEL: "error",
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  child.stdout?.on("data", (c: Buffer) => {
    output += c.toString();
  });
  child.stderr?.on("data", (c: Buffer) => {
    output += c.toString();
  });
  await until(
    "npm start to come up",
    async () => {
      if (child?.exitCode !== null) throw new Error(`npm start exited with ${child?.exitCode}:\n${output}`);
      return output.includes("Ctrl-C stops everything");
    },
    800_000,
    250,
  ).catch((e: unknown) => {
    throw new Error(`${e}\n${output}`);
  });
});

afterAll(async () => {
  stopNpmStart(child, dataDir);
});

const as = (token = "") => apiAs(api, token);

describe.skipIf(!can.ok)(`npm start with the real node${can.ok ? "" : ` (skipped: ${can.reason})`}`, () => {
  it("builds the session images without waiting on them, then runs the researcher's real JupyterLab on the real node through gpu-b's gateway", async () => {
    expect(output).toContain(`real node: a real kubelet and containerd join gpu-b`);
    expect(output).toMatch(/\[real-sessions\] .*building in the background/);
    await until(
      "the session images in the catalog",
      async () => {
        if (/session images not offered/.test(output)) throw new Error(output);
        return output.includes(IMAGES_READY);
      },
      2_000_000,
      1_000,
    );
    console.log(
      output
        .split("\n")
        .filter((l) => l.includes("[real-sessions]"))
        .join("\n"),
    );

    const first = await as().call("login", { body: { email: "researcher@berth.local", password: PASSWORD } });
    const changed = await as(first.access_token).call("changePassword", {
      body: { current_password: PASSWORD, new_password: "a password of the researcher's own" },
    });
    const researcher = as(changed.access_token);

    const created = await researcher.call("createSession", {
      body: { offering: "l4", preset: REAL_PRESET, image: "jupyterlab-local", name: "real-lab" },
    });
    const id = created.id;
    const session = () => researcher.call("getSession", { params: { sessionId: id } });
    // A cold pull of the image by the node's containerd, then JupyterLab's own start.
    const running = await until(
      "Running",
      async () => {
        const s = await session();
        if (s.phase === "Failed") throw new Error(JSON.stringify(s));
        return s.phase === "Running" ? s : undefined;
      },
      300_000,
      1_000,
    );
    const gpuB = new HttpKube(kubeConfigFrom(readFileSync(join(dataDir, "kubeconfig-gpu-b.yaml"), "utf8")));
    try {
      const pod = (await gpuB.request<any>("GET", `/api/v1/namespaces/berth-sessions/pods/${running.resource_name}`))
        .body;
      expect(pod.spec.nodeName).toBe(REAL_NODE);
      expect(pod.spec.containers[0].image).toMatch(/\/sessions\/jupyterlab:/);
    } finally {
      gpuB.close();
    }

    // The lab through gpu-b's gateway: the link's token is swapped for a cookie, then JupyterLab answers.
    const links = await researcher.call("getSessionConnectLinks", { params: { sessionId: id } });
    const ca = readFileSync(join(dataDir, "gateway-gpu-b.crt"), "utf8");
    const redeem = await get(links.links.lab, { ca });
    expect(redeem.status, redeem.body).toBe(303);
    const lab = await get(new URL(redeem.headers.location as string, links.links.lab).href, {
      ca,
      headers: { cookie: cookieFrom(redeem) as string },
    });
    expect(lab.status).toBe(200);
    expect(lab.body).toContain("JupyterLab");

    await researcher.call("pauseSession", { params: { sessionId: id } });
    await until("Paused", async () => (await session()).phase === "Paused");

    child?.kill("SIGINT");
    const code = await new Promise<number | null>((resolve) => {
      if (child?.exitCode !== null) resolve(child?.exitCode ?? null);
      child?.once("exit", (c) => resolve(c));
    });
    expect(code).toBe(0);
    expect(leftovers()).toEqual([]);
  });
});
