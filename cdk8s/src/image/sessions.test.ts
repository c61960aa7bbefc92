// The session images, built by the project's builder (sessions.ts) from Debian and the registries, each run
// for real: unpacked into a root filesystem and started with runc as the image's user, on the host's network
// under a base path, as a session pod runs it. JupyterLab answers its API and runs 21*2 in a kernel over the
// kernel's WebSocket; the terminal runs a command typed over its WebSocket; code-server loads its workbench.
// Builds come from the cache (~/.cache/berth/images) when warm; a cold build takes minutes (docs/dev/session-images.md).
import { execFileSync, spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type LocalRegistry, startRegistry } from "@berth/e2e";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  type BuiltImage,
  buildSessionImage,
  CATALOG_KINDS,
  KINDS,
  PORTS,
  publishSessionImages,
  REPOSITORIES,
  type SessionImageKind,
  USER,
} from "./sessions.ts";

vi.setConfig({ testTimeout: 180_000, hookTimeout: 45 * 60_000 });

const has = (cmd: string) => spawnSync("sh", ["-c", `command -v ${cmd}`]).status === 0;
const root = process.getuid?.() === 0;
// Building needs root (chroot, mounts) and debootstrap, running needs runc (.ci/run installs them with
// scripts/ensure-image-tools.sh and scripts/ensure-node-runtime.sh). Skipped where not root; under CI=true as root a missing tool fails.
const ci = process.env.CI === "true";
const canBuild = root && (ci || (has("debootstrap") && has("flock")));
const canRun = canBuild && (ci || has("runc"));

const PREFIX = "berth-image-test-";
const built = {} as Record<SessionImageKind, BuiltImage>;
let work: string;

function blob(img: BuiltImage, digest: string): Buffer {
  return readFileSync(join(img.dir, "blobs/sha256", digest.slice(7)));
}
function configOf(img: BuiltImage) {
  const manifest = JSON.parse(blob(img, img.digest).toString()) as {
    config: { digest: string };
    layers: { digest: string }[];
  };
  const config = JSON.parse(blob(img, manifest.config.digest).toString()) as {
    config: {
      User: string;
      WorkingDir: string;
      Env: string[];
      Entrypoint: string[];
      Cmd: string[];
      ExposedPorts: object;
      Volumes: object;
    };
  };
  return { manifest, config: config.config };
}

/** The layers applied in order, whiteouts honoured, as a runtime's snapshotter does. */
function unpack(img: BuiltImage, to: string) {
  mkdirSync(to, { recursive: true });
  for (const l of configOf(img).manifest.layers) {
    const file = join(img.dir, "blobs/sha256", l.digest.slice(7));
    const names = execFileSync("tar", ["-tzf", file], { encoding: "utf8", maxBuffer: 2 ** 28 }).split("\n");
    for (const n of names.filter((x) => /(^|\/)\.wh\.[^/]+$/.test(x))) {
      const name = n.replace(/^\.\//, "");
      const dir = name.includes("/") ? name.slice(0, name.lastIndexOf("/")) : "";
      const base = name.slice(name.lastIndexOf("/") + 1);
      if (base === ".wh..wh..opq") {
        // A folder the lower layers lack has nothing to hide.
        if (existsSync(join(to, dir)))
          for (const e of readdirSync(join(to, dir))) rmSync(join(to, dir, e), { recursive: true, force: true });
      } else rmSync(join(to, dir, base.slice(4)), { recursive: true, force: true });
    }
    execFileSync("tar", ["-xzf", file, "-C", to, "--numeric-owner", "--exclude=*.wh.*"]);
  }
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

interface Container {
  id: string;
  port: number;
  base: string;
  log: string;
  startedAt: number;
}
const containers: Container[] = [];

/** Runs the image as a session pod would: its entry point, user and working folder, BERTH_* set, host network. */
async function runImage(kind: SessionImageKind): Promise<Container> {
  const img = built[kind];
  const id = `${PREFIX}${kind}-${process.pid}`;
  const bundle = join(work, id);
  unpack(img, join(bundle, "rootfs"));
  const { config } = configOf(img);
  const port = await freePort();
  const base = `/proxy/${kind}-x/`;
  const [uid, gid] = config.User.split(":").map(Number) as [number, number];
  writeFileSync(
    join(bundle, "config.json"),
    JSON.stringify({
      ociVersion: "1.0.2",
      process: {
        terminal: false,
        user: { uid, gid },
        args: [...config.Entrypoint, ...config.Cmd],
        env: [
          ...config.Env,
          `BERTH_BASE_PATH=${base}`,
          `NB_PREFIX=${base.slice(0, -1)}`,
          `BERTH_PORT=${port}`,
          "BERTH_SESSION_ID=test",
        ],
        cwd: config.WorkingDir,
        capabilities: { bounding: [], effective: [], permitted: [] },
        noNewPrivileges: true,
      },
      root: { path: "rootfs", readonly: false },
      hostname: kind,
      mounts: [
        { destination: "/proc", type: "proc", source: "proc" },
        {
          destination: "/dev",
          type: "tmpfs",
          source: "tmpfs",
          options: ["nosuid", "strictatime", "mode=755", "size=65536k"],
        },
        {
          destination: "/dev/pts",
          type: "devpts",
          source: "devpts",
          options: ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"],
        },
        {
          destination: "/dev/shm",
          type: "tmpfs",
          source: "shm",
          options: ["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"],
        },
        { destination: "/sys", type: "sysfs", source: "sysfs", options: ["nosuid", "noexec", "nodev", "ro"] },
        { destination: "/tmp", type: "tmpfs", source: "tmpfs", options: ["nosuid", "nodev", "mode=1777"] },
      ],
      linux: {
        // The host's network (a pod's IP is data here); its own mount, PID, IPC and UTS namespaces.
        namespaces: [{ type: "pid" }, { type: "ipc" }, { type: "uts" }, { type: "mount" }],
        maskedPaths: ["/proc/kcore", "/proc/keys", "/proc/timer_list"],
        readonlyPaths: ["/proc/sys", "/proc/sysrq-trigger"],
      },
    }),
  );
  const log = join(bundle, "output.log");
  const out = openSync(log, "a");
  const startedAt = performance.now();
  const proc = spawn("runc", ["run", "--detach", "--bundle", bundle, id], { stdio: ["ignore", out, out] });
  const code = await new Promise<number | null>((r) => proc.on("exit", r));
  if (code !== 0) throw new Error(`runc run ${id} exited ${code}: ${readFileSync(log, "utf8").slice(-2000)}`);
  const c = { id, port, base, log, startedAt };
  containers.push(c);
  return c;
}

function removeContainer(id: string) {
  spawnSync("runc", ["kill", id, "KILL"]);
  for (let i = 0; i < 50; i++) {
    if (spawnSync("runc", ["delete", "--force", id]).status === 0) return;
    execFileSync("sleep", ["0.1"]);
  }
}

/** Polls `url` until it answers 200; answers the seconds since the container started. */
async function ready(c: Container, path: string, deadlineMs = 120_000): Promise<number> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const r = await fetch(`http://127.0.0.1:${c.port}${c.base}${path}`).catch(() => undefined);
    if (r?.status === 200) return (performance.now() - c.startedAt) / 1000;
    if (Date.now() > until)
      throw new Error(
        `${c.id}: ${path} never answered 200 (last ${r?.status}): ${readFileSync(c.log, "utf8").slice(-3000)}`,
      );
    await new Promise((res) => setTimeout(res, 250));
  }
}

/** Opens a WebSocket and collects text frames until `done` says the answer is in (or the deadline passes). */
function converse(url: string, send: (ws: WebSocket) => void, done: (all: string[]) => boolean, ms = 60_000) {
  return new Promise<string[]>((resolve, reject) => {
    const ws = new WebSocket(url);
    const got: string[] = [];
    const timer = setTimeout(() => {
      ws.close();
      reject(new Error(`no answer on ${url} within ${ms} ms; got ${JSON.stringify(got).slice(-2000)}`));
    }, ms);
    ws.onopen = () => send(ws);
    ws.onerror = () => {
      clearTimeout(timer);
      reject(new Error(`WebSocket ${url} failed; got ${JSON.stringify(got).slice(-2000)}`));
    };
    ws.onmessage = (e) => {
      got.push(typeof e.data === "string" ? e.data : String(e.data));
      if (done(got)) {
        clearTimeout(timer);
        ws.close();
        resolve(got);
      }
    };
  });
}

beforeAll(() => {
  if (!canBuild) return;
  work = mkdtempSync(join(tmpdir(), PREFIX));
  // A run killed before its cleanup leaves containers named like ours: remove them first.
  if (canRun) {
    // `runc list` prints null when there is none.
    const listed = JSON.parse(execFileSync("runc", ["list", "--format", "json"], { encoding: "utf8" }) || "null");
    for (const c of (listed ?? []) as { id: string }[]) if (c.id.startsWith(PREFIX)) removeContainer(c.id);
  }
  for (const kind of KINDS) {
    built[kind] = buildSessionImage(kind);
    console.log(
      `${kind}: ${built[kind].cached ? "from the cache" : "built"} in ${built[kind].seconds.toFixed(1)} s; layers ${built[
        kind
      ].layers
        .map(
          (l) => `${l.name} ${(l.size / 2 ** 20).toFixed(1)} MiB (${(l.unpacked / 2 ** 20).toFixed(1)} MiB unpacked)`,
        )
        .join(", ")}`,
    );
  }
});

afterAll(() => {
  for (const c of containers) removeContainer(c.id);
  if (work) rmSync(work, { recursive: true, force: true });
});

describe.skipIf(!canBuild)("session images (needs root and debootstrap: chroot, overlay mounts)", () => {
  it.each(KINDS)("%s: runs as jovyan (1000:100) from /home/jovyan, its port exposed, volumes under work/", (kind) => {
    const { config, manifest } = configOf(built[kind]);
    expect(config.User).toBe(`${USER.uid}:${USER.gid}`);
    expect(config.WorkingDir).toBe("/home/jovyan");
    expect(config.Entrypoint).toEqual(["/usr/bin/tini", "-g", "--"]);
    expect(config.ExposedPorts).toEqual({ [`${PORTS[kind]}/tcp`]: {} });
    expect(config.Volumes).toEqual({ "/home/jovyan/work": {} });
    expect(config.Env).toContain("HOME=/home/jovyan");
    expect(manifest.layers).toHaveLength(2);
  });

  it("shares one base layer between the three images, and a second build comes from the cache", () => {
    const bases = new Set(KINDS.map((k) => configOf(built[k]).manifest.layers[0]?.digest));
    expect(bases.size).toBe(1);
    for (const kind of KINDS) {
      const again = buildSessionImage(kind, { quiet: true });
      expect(again.cached).toBe(true);
      expect(again.digest).toBe(built[kind].digest);
    }
  });

  it("pushes each image to the bed's registry, which lists its tag; the references name the catalog's kinds", async () => {
    let registry: LocalRegistry | undefined;
    try {
      registry = await startRegistry({ name: "session-images" });
      const refs = await publishSessionImages(registry.host);
      expect(Object.keys(refs).sort()).toEqual(["code-server", "jupyterlab", "terminal"]);
      for (const kind of KINDS) {
        const ref = refs[CATALOG_KINDS[kind]];
        expect(ref).toBe(`${registry.host}/${REPOSITORIES[kind]}:${built[kind].tag}`);
        const tags = (await (await fetch(`${registry.url}/v2/${REPOSITORIES[kind]}/tags/list`)).json()) as {
          tags: string[];
        };
        expect(tags.tags).toEqual([built[kind].tag]);
        const head = await fetch(`${registry.url}/v2/${REPOSITORIES[kind]}/manifests/${built[kind].tag}`, {
          method: "HEAD",
          headers: { accept: "application/vnd.oci.image.manifest.v1+json" },
        });
        expect(head.headers.get("docker-content-digest")).toBe(built[kind].digest);
      }
    } finally {
      await registry?.stop();
    }
  });
});

describe.skipIf(!canRun)("session images run (needs root and runc)", () => {
  it("JupyterLab answers under its base path without a token and runs 21*2 in a kernel over the WebSocket", async () => {
    const c = await runImage("jupyterlab");
    const seconds = await ready(c, "api");
    console.log(`jupyterlab: /api answered 200 ${seconds.toFixed(1)} s after runc run`);
    const url = (p: string) => `http://127.0.0.1:${c.port}${c.base}${p}`;
    expect((await fetch(url("lab"))).status).toBe(200);
    expect(await (await fetch(url("api/kernels"))).json()).toEqual([]);
    expect((await fetch(url("api/terminals"))).status).toBe(200);
    // A browser's way: the page sets the _xsrf cookie that API writes send back as a header.
    const page = await fetch(url("lab"));
    const xsrf = /_xsrf=([^;]+)/.exec(page.headers.get("set-cookie") ?? "")?.[1] ?? "";
    const started = await fetch(url("api/kernels"), {
      method: "POST",
      headers: { "content-type": "application/json", "x-xsrftoken": xsrf, cookie: `_xsrf=${xsrf}` },
      body: JSON.stringify({ name: "python3" }),
    });
    expect(started.status).toBe(201);
    const kernel = (await started.json()) as { id: string };
    const msgId = `exec-${Date.now()}`;
    const frames = await converse(
      `ws://127.0.0.1:${c.port}${c.base}api/kernels/${kernel.id}/channels`,
      (ws) =>
        ws.send(
          JSON.stringify({
            channel: "shell",
            header: {
              msg_id: msgId,
              msg_type: "execute_request",
              username: "test",
              session: "test",
              version: "5.3",
              date: new Date().toISOString(),
            },
            parent_header: {},
            metadata: {},
            content: { code: "21*2", silent: false, store_history: false, user_expressions: {}, allow_stdin: false },
            buffers: [],
          }),
        ),
      (all) => all.some((f) => f.includes('"execute_result"') && f.includes(msgId)),
    );
    const result = frames
      .map((f) => JSON.parse(f))
      .find((m) => m.msg_type === "execute_result" || m.header?.msg_type === "execute_result");
    expect(result.content.data["text/plain"]).toBe("42");
    // The idle rule's signal (docs/dev/idle-and-limits.md) sees the kernel.
    const kernels = (await (await fetch(url("api/kernels"))).json()) as { id: string; execution_state: string }[];
    expect(kernels.map((k) => k.id)).toEqual([kernel.id]);
  });

  it("the terminal serves its page under the base path and runs a command typed over its WebSocket", async () => {
    const c = await runImage("terminal");
    const seconds = await ready(c, "");
    console.log(`terminal: page answered 200 ${seconds.toFixed(1)} s after runc run`);
    const page = await (await fetch(`http://127.0.0.1:${c.port}${c.base}`)).text();
    expect(page).toContain("xterm/xterm.js");
    // The connect link's path (/proxy/{cr}/terminal) is the same page.
    const linked = await fetch(`http://127.0.0.1:${c.port}${c.base}terminal`);
    expect(linked.status).toBe(200);
    expect(await linked.text()).toContain("xterm/xterm.js");
    expect((await fetch(`http://127.0.0.1:${c.port}${c.base}xterm/xterm.js`)).status).toBe(200);
    const frames = await converse(
      `ws://127.0.0.1:${c.port}${c.base}websocket`,
      (ws) => {
        ws.send(JSON.stringify(["set_size", 24, 80, 480, 800]));
        ws.send(JSON.stringify(["stdin", "echo answer=$((6*7)) user=$(id -u):$(id -g) pwd=$PWD\r"]));
      },
      (all) => all.join("").includes("answer=42"),
    );
    const out = frames
      .map((f) => JSON.parse(f) as [string, string])
      .filter(([t]) => t === "stdout")
      .map(([, d]) => d)
      .join("");
    expect(out).toContain("answer=42 user=1000:100 pwd=/home/jovyan");
  });

  it("code-server loads its workbench and its scripts under the base path", async () => {
    const c = await runImage("code");
    const seconds = await ready(c, "");
    console.log(`code: workbench answered 200 ${seconds.toFixed(1)} s after runc run`);
    const page = await (await fetch(`http://127.0.0.1:${c.port}${c.base}`)).text();
    expect(page).toContain("workbench");
    // Its assets are relative: fetched through the base path, they must come back.
    const assets = [...page.matchAll(/(?:src|href)="(\.\/[^"?]+)"/g)].map((m) => m[1] as string);
    const asset = assets.find((a) => a.endsWith(".js")) ?? assets[0];
    expect(asset, page.slice(0, 2000)).toBeDefined();
    const res = await fetch(new URL(asset as string, `http://127.0.0.1:${c.port}${c.base}`));
    expect(res.status).toBe(200);
    // The connect link's path (/proxy/{cr}/code/) serves the same workbench, its assets under it.
    const linked = await (await fetch(`http://127.0.0.1:${c.port}${c.base}code/`)).text();
    expect(linked).toContain("workbench");
    const linkedAsset = await fetch(new URL(asset as string, `http://127.0.0.1:${c.port}${c.base}code/`));
    expect(linkedAsset.status).toBe(200);
    expect(existsSync(join(work, c.id, "rootfs/usr/local/bin/node"))).toBe(true);
  });
});
