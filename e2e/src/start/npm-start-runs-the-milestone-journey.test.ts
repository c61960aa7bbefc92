// The first milestone, as a researcher meets it: `npm start`'s own process (its Postgres, its three
// clusters, its API, operators, worker and gateways; only the data folder and ports differ) → the demo
// researcher signs in and must change the password → starts a session on an H100 → it is Running → its
// notebook link opens through the cluster's gateway → pause: the GPU is free again → the time it ran is
// charged, once, to the researcher's own wallet. Ctrl-C then leaves no process and no port behind.
// Everything goes through the public API and the gateway, as the console and a browser would.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpsServer, request } from "node:https";
import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ApiError } from "@berth/console/client";
import { selfSignedCertificate } from "@berth/operator/gateway";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { apiAs, refusalOf } from "../api-client.ts";
import { quietPorts } from "../testbed/ports.ts";
import { until } from "../until.ts";
import { leftoversOf, stopNpmStart } from "./npm-start.test-support.ts";

vi.setConfig({ testTimeout: 300_000, hookTimeout: 300_000 });

const root = join(import.meta.dirname, "..", "..", "..");
const dataDir = mkdtempSync(join(tmpdir(), "berth-npm-start-"));
const PASSWORD = "the demo's first password";
const ADMIN_PASSWORD = "the administrator's first password";
// A webhook receiver with a certificate of its own (a private CA), admitted by BERTH_WEBHOOK_ALLOW_HOSTS and
// trusted through BERTH_WEBHOOK_CA_FILE: the worker npm start runs must read that file as a deployed one does.
const receiverDir = mkdtempSync(join(tmpdir(), "berth-npm-start-receiver-"));
const receiverTls = selfSignedCertificate({ names: ["127.0.0.1"] });
writeFileSync(join(receiverDir, "ca.pem"), receiverTls.certPem);
const received: { path: string; headers: Record<string, unknown>; body: string }[] = [];
const receiver = createHttpsServer({ cert: receiverTls.certPem, key: receiverTls.keyPem }, (req, res) => {
  let body = "";
  req.on("data", (c: Buffer) => {
    body += c.toString();
  });
  req.on("end", () => {
    received.push({ path: req.url ?? "", headers: req.headers, body });
    res.writeHead(204).end();
  });
});
let child: ChildProcess | undefined;
let output = "";
let api = "";
let gatewayPort = 0;

async function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer().listen(port, "127.0.0.1", () => s.close(() => resolve(true)));
    s.on("error", () => resolve(false));
  });
}
const leftovers = () => leftoversOf(dataDir);

beforeAll(async () => {
  // The API, the internal listener, and the gateways of gpu-a and gpu-b (one after the other).
  const first = await quietPorts(4);
  const [apiPort, internalPort] = [first, first + 1];
  gatewayPort = first + 2;
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  api = `http://127.0.0.1:${apiPort}`;
  child = spawn(process.execPath, [join(root, "e2e/src/start/main.ts")], {
    cwd: root,
    env: {
      ...process.env,
      BERTH_DATA_DIR: dataDir,
      BERTH_API_PORT: String(apiPort),
      BERTH_INTERNAL_PORT: String(internalPort),
      BERTH_GATEWAY_PORT: String(gatewayPort),
      BERTH_DEMO_PASSWORD: PASSWORD,
      BERTH_BOOTSTRAP_PASSWORD: ADMIN_PASSWORD,
      BERTH_WEBHOOK_ALLOW_HOSTS: "127.0.0.1",
      BERTH_WEBHOOK_CA_FILE: join(receiverDir, "ca.pem"),
      BERTH_LOG_LEVEL: "error",
      // The journey is kwok's; the real node has its own tests (e2e/src/testbed/real-node.test.ts).
      BERTH_REAL_NODE: "0",
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
  const deadline = Date.now() + 240_000;
  while (!output.includes("Ctrl-C stops everything")) {
    if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}:\n${output}`);
    if (Date.now() > deadline) throw new Error(`npm start did not come up in 240 s:\n${output}`);
    await new Promise((r) => setTimeout(r, 250));
  }
});

afterAll(async () => {
  stopNpmStart(child, dataDir);
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
  rmSync(receiverDir, { recursive: true, force: true });
});

/** npm start's API as the holder of `token` calls it (none before signing in). */
const as = (token = "") => apiAs(api, token);
/** A GET through a gateway, trusting only the certificate npm start wrote for it. */
function viaGateway(url: string, ca: string, cookie?: string) {
  return new Promise<{ status: number; location?: string; cookie?: string; body: string }>((resolve, reject) => {
    const req = request(url, { ca, headers: cookie ? { cookie } : {} }, (res) => {
      let body = "";
      res.on("data", (c: Buffer) => {
        body += c.toString();
      });
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          ...(res.headers.location ? { location: res.headers.location } : {}),
          ...(res.headers["set-cookie"]?.[0] ? { cookie: res.headers["set-cookie"][0].split(";")[0] } : {}),
          body,
        }),
      );
    });
    req.on("error", reject);
    req.end();
  });
}

describe("npm start", () => {
  it("delivers an organization's webhook ping to a receiver whose certificate only BERTH_WEBHOOK_CA_FILE trusts", async () => {
    // Each call answered means its one success status in the contract (200, 201, 202).
    const first = await as().call("login", { body: { email: "admin@berth.local", password: ADMIN_PASSWORD } });
    const changed = await as(first.access_token).call("changePassword", {
      body: { current_password: ADMIN_PASSWORD, new_password: "an administrator's password of its own" },
    });
    const admin = as(changed.access_token);
    const orgs = (await admin.call("listOrganizations")).data;
    const demo = orgs.find((o) => o.name === "Demo");
    expect(demo, JSON.stringify(orgs)).toBeDefined();
    const port = (receiver.address() as AddressInfo).port;
    const hook = await admin.call("createWebhook", {
      body: { organization_id: demo?.id ?? "", url: `https://127.0.0.1:${port}/berth` },
    });
    const ping = await admin.call("pingWebhook", { params: { webhookId: hook.id } });
    const got = await until("the ping at the receiver", async () =>
      received.find((r) => r.headers["webhook-id"] === ping.event_id),
    );
    expect(got.path).toBe("/berth");
    expect(JSON.parse(got.body)).toMatchObject({ type: "webhook.test" });
    expect(got.headers["webhook-signature"]).toMatch(/^v1,/);
  });

  it("lets the demo researcher run an H100 session, open it, pause it, and pay for exactly the time it ran", async () => {
    const first = await as().call("login", { body: { email: "researcher@berth.local", password: PASSWORD } });
    expect(first.must_change_password).toBe(true);
    const blocked = await refusalOf(as(first.access_token).call("listSessions"));
    expect(blocked.status).toBe(403);
    const changed = await as(first.access_token).call("changePassword", {
      body: { current_password: PASSWORD, new_password: "a password of the researcher's own" },
    });
    const researcher = as(changed.access_token);
    const availability = async () => (await researcher.call("getGpuAvailability")).clusters;

    const [wallet] = (await researcher.call("listWallets")).data;
    if (!wallet) throw new Error("the researcher has no wallet");
    expect(wallet.balance).toBe("25000000");
    const free = (await availability()).find((c) => c.gpu_model === "NVIDIA-H100-80GB-HBM3");
    expect(free).toMatchObject({ cluster_name: "gpu-a", free: 16, in_use: 0 });
    if (!free) throw new Error("no H100 availability");

    // Her home volume is on the shared pool, ready to mount: files there outlive the session's pod.
    const volumes = (await researcher.call("listVolumes")).data;
    const home = volumes.find((v) => v.name === "home");
    expect(home).toMatchObject({ size_gb: 20, pool: "shared", bound_cluster: null });
    if (!home) throw new Error("no home volume");
    const created = await researcher.call("createSession", {
      body: {
        offering: "h100",
        preset: "gpu-small",
        image: "jupyterlab",
        name: "milestone",
        volumes: [{ volume: home.id, mount_path: "/home/jovyan/work" }],
      },
    });
    const id = created.id;
    const session = () => researcher.call("getSession", { params: { sessionId: id } });
    const running = await until("Running", async () => {
      const s = await session();
      return s.phase === "Running" ? s : undefined;
    });
    expect(running.cluster_id).toBe(free.cluster_id);
    const mounted = await researcher.call("getVolume", { params: { volumeId: home.id } });
    expect(mounted).toMatchObject({ bound_cluster: free.cluster_id });
    expect(mounted.mounts).toEqual([{ session_id: id, read_only: false, mount_path: "/home/jovyan/work" }]);

    // The notebook through gpu-a's gateway: the link's token is swapped for a cookie, then the app answers.
    const links = await researcher.call("getSessionConnectLinks", { params: { sessionId: id } });
    expect(links.links.lab).toMatch(new RegExp(`^https://127\\.0\\.0\\.1:${gatewayPort}/proxy/`));
    const ca = readFileSync(join(dataDir, "gateway-gpu-a.crt"), "utf8");
    const redeem = await viaGateway(links.links.lab, ca);
    expect(redeem.status).toBe(303);
    expect(redeem.cookie).toBeDefined();
    const lab = await viaGateway(new URL(redeem.location as string, links.links.lab).href, ca, redeem.cookie);
    expect(lab.status).toBe(200);
    expect(lab.body).toContain("JupyterLab");
    const inUse = (await availability()).find((c) => c.cluster_id === free.cluster_id);
    expect(inUse?.in_use).toBe(1);

    // Her GPU on her session's chart: gpu-a's stand-in exporter, its operator's forward, the metrics server.
    await until("the session's GPU chart", async () => {
      // Refused (the metrics not there yet) is "not yet", as any answer but 200 was before.
      const p = await researcher
        .call("getMonitoringPanel", {
          params: { panelId: "session.gpu_utilization" },
          query: { session: id, range: "15m" },
        })
        .catch((e: unknown) => {
          if (e instanceof ApiError) return undefined;
          throw e;
        });
      return p?.series[0]?.values.some((v) => v !== null && v > 0);
    });
    // The control plane's own processes, scraped by the metrics server from their metrics listeners.
    const metricsServer = /metrics server\s*│?\s*(http:\/\/[\d.:]+)/.exec(output)?.[1];
    expect(metricsServer, output).toBeDefined();
    for (const job of ["berth-api", "berth-worker"])
      await until(`the metrics server to scrape ${job}`, async () => {
        const q = await fetch(`${metricsServer}/api/v1/query?query=${encodeURIComponent(`up{job="${job}"}`)}`);
        const body = (await q.json()) as { data?: { result?: { value?: [number, string] }[] } };
        return body.data?.result?.[0]?.value?.[1] === "1";
      });

    // A run-duration, not a wait for an event: the session runs a few seconds so there is time to charge.
    await new Promise((r) => setTimeout(r, 3_000));
    const pauseAsked = Date.now();
    await researcher.call("pauseSession", { params: { sessionId: id } });
    await until("Paused", async () => (await session()).phase === "Paused");
    await until("the GPU to be free again", async () => {
      const c = (await availability()).find((x) => x.cluster_id === free.cluster_id);
      return c?.in_use === 0 && c.free === 16;
    });

    // Charged: the time the pod ran (whole seconds, as Kubernetes stamps them), once, to her own wallet.
    const usage = await until("the last usage sample", async () => {
      const u = await researcher.call("getSessionUsage", { params: { sessionId: id } });
      const { since, until: last } = u.totals;
      return since && last && Date.parse(last) >= pauseAsked - 1_000 ? { ...u.totals, since, until: last } : undefined;
    });
    const ranMs = Date.parse(usage.until) - Date.parse(usage.since);
    expect(usage.gpu_seconds * 1000).toBe(ranMs);
    expect(ranMs).toBeGreaterThanOrEqual(2_000);
    const cost = (4_000_000n * BigInt(ranMs)) / 3_600_000n;
    const ledgerLines = async () =>
      (await researcher.call("getWalletLedger", { params: { walletId: wallet.id }, query: { size: 100 } })).data;
    const ledger = await until("the charges", async () => {
      const l = await ledgerLines();
      // GPU time only: the home volume's storage is charged per hour on its own lines (e.storage).
      const charges = l.filter((e) => e.kind === "charge" && !e.storage);
      return charges.length === usage.samples ? charges : undefined;
    });
    const charged = ledger.reduce((n, e) => n - BigInt(e.amount), 0n);
    expect(charged).toBe(cost);
    const after = await researcher.call("getWallet", { params: { walletId: wallet.id } });
    const lines = await ledgerLines();
    const storage = lines.filter((e) => e.storage).reduce((n, e) => n - BigInt(e.amount), 0n);
    expect(BigInt(after.balance)).toBe(25_000_000n - cost - storage);

    // Ctrl-C: everything it started is gone, ports included.
    child?.kill("SIGINT");
    const code = await new Promise<number | null>((resolve) => {
      if (child?.exitCode !== null) resolve(child?.exitCode ?? null);
      child?.once("exit", (c) => resolve(c));
    });
    expect(code).toBe(0);
    expect(leftovers()).toEqual([]);
    expect(await isFree(Number(new URL(api).port))).toBe(true);
    expect(await isFree(gatewayPort)).toBe(true);
  });
});
