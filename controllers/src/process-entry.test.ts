// The entry-point helpers in a real child process (they call process.exit and listen for signals): a small
// entry point built on them, told by argv how its configuration, start and stop go.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";

const dir = mkdtempSync(join(tmpdir(), "berth-process-entry-"));
const entry = join(dir, "entry.mjs");
writeFileSync(
  entry,
  `import { configOrExit, runMain, stopOnSignals } from ${JSON.stringify(pathToFileURL(join(import.meta.dirname, "process-entry.ts")).href)};
class TestConfigError extends Error {}
const line = (o, msg) => console.log(JSON.stringify(typeof o === "string" ? { msg: o } : { ...o, msg }));
const log = { info: line, error: line };
const mode = process.argv[2];
runMain("svc", async () => {
  configOrExit(() => {
    if (mode === "bad-config") throw new TestConfigError("invalid configuration:\\n  BERTH_X: required");
    if (mode === "parse-bug") throw new TypeError("not a configuration problem");
  }, TestConfigError);
  if (mode === "start-fails") throw new Error("port taken");
  const stop = { "stop-fails": () => Promise.reject(new Error("lease not released")), "stop-hangs": () => new Promise(() => {}) }[mode];
  stopOnSignals(log, stop ?? (() => Promise.resolve()), "svc stopped");
  setInterval(() => {}, 60_000);
  line("ready");
});
`,
);

interface Run {
  child: ChildProcess;
  exited: Promise<number | null>;
  stdout: () => string;
  stderr: () => string;
  /** Resolves once stdout has a line with this `msg`. */
  logged(msg: string): Promise<void>;
}

let running: ChildProcess | undefined;

function run(mode: string): Run {
  const child = spawn(process.execPath, [entry, mode], { stdio: ["ignore", "pipe", "pipe"] });
  running = child;
  let out = "";
  let err = "";
  child.stdout.on("data", (b: Buffer) => {
    out += b.toString();
  });
  child.stderr.on("data", (b: Buffer) => {
    err += b.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const msgs = () =>
    out
      .split("\n")
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { msg: string }).msg);
  return {
    child,
    exited,
    stdout: () => out,
    stderr: () => err,
    logged: async (msg) => {
      await expect.poll(msgs, { timeout: 30_000 }).toContain(msg);
    },
  };
}

afterEach(() => {
  if (running && running.exitCode === null && running.signalCode === null) running.kill("SIGKILL");
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("an entry point's configuration", () => {
  it("with problems is written to stderr, and the process exits 2", async () => {
    const r = run("bad-config");
    expect(await r.exited).toBe(2);
    expect(r.stderr()).toBe("invalid configuration:\n  BERTH_X: required\n");
  });

  it("that fails for another reason is a failed start (exit 1), not a configuration problem", async () => {
    const r = run("parse-bug");
    expect(await r.exited).toBe(1);
    expect(r.stderr()).toMatch(/^svc failed to start: TypeError: not a configuration problem/);
  });
});

describe("an entry point's start", () => {
  it("that fails is written to stderr with its stack, and the process exits 1", async () => {
    const r = run("start-fails");
    expect(await r.exited).toBe(1);
    expect(r.stderr()).toMatch(/^svc failed to start: Error: port taken\n\s+at /);
  });
});

describe("an entry point's stop on a signal", () => {
  it("SIGTERM stops it, logs that it stopped, and exits 0", async () => {
    const r = run("stops");
    await r.logged("ready");
    r.child.kill("SIGTERM");
    expect(await r.exited).toBe(0);
    expect(r.stdout()).toContain('"signal":"SIGTERM","msg":"stopping"');
    expect(r.stdout()).toContain('"msg":"svc stopped"');
  });

  it("SIGINT does the same", async () => {
    const r = run("stops");
    await r.logged("ready");
    r.child.kill("SIGINT");
    expect(await r.exited).toBe(0);
  });

  it("a stop that fails is logged, and the process exits 1", async () => {
    const r = run("stop-fails");
    await r.logged("ready");
    r.child.kill("SIGTERM");
    expect(await r.exited).toBe(1);
    await r.logged("stop failed");
  });

  it("a second signal while the stop hangs exits 1 at once", async () => {
    const r = run("stop-hangs");
    await r.logged("ready");
    r.child.kill("SIGTERM");
    await r.logged("stopping");
    const second = Date.now();
    r.child.kill("SIGTERM");
    expect(await r.exited).toBe(1);
    expect(Date.now() - second).toBeLessThan(10_000); // not the 25 s deadline
    expect(r.stdout()).not.toContain("svc stopped");
  });
});
