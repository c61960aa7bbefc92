// Builds the console with Vite into console/dist, which the API serves at `/` (api/src/http/console.ts). `npm start` and
// `npm test` call ensureConsoleBuilt() so a fresh clone never serves a missing or stale console:
//
//   node console/src/server/build.ts           build when dist is missing or older than a source file
//   node console/src/server/build.ts --force    always build (npm run build -w console)
//
// The build goes to a temporary folder that is swapped in at the end, so an API process serving the old
// build never sees a half-written dist, and two concurrent callers cannot interleave their output.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

export const CONSOLE_DIR = join(import.meta.dirname, "..", "..");
export const CONSOLE_DIST = join(CONSOLE_DIR, "dist");
const ROOT = join(CONSOLE_DIR, "..");
const INPUTS = ["src", "index.html", "vite.config.ts", "package.json"];

function newestMtime(path: string): number {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const e of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, e)));
  return newest;
}

/** True when dist/index.html exists and is newer than every input of the build. */
export function isConsoleBuildCurrent(dist = CONSOLE_DIST): boolean {
  const index = join(dist, "index.html");
  if (!existsSync(index)) return false;
  const built = statSync(index).mtimeMs;
  return INPUTS.every((p) => newestMtime(join(CONSOLE_DIR, p)) <= built);
}

export interface BuildResult {
  built: boolean;
  dist: string;
  ms: number;
}

/** Builds the console (synchronously: Vite in a child process) and precompresses text assets for gzip. */
export function buildConsole(opts: { dist?: string; log?: (line: string) => void } = {}): BuildResult {
  const dist = opts.dist ?? CONSOLE_DIST;
  const started = performance.now();
  const tmp = `${dist}.tmp-${process.pid}-${Date.now()}`;
  const vite = join(ROOT, "node_modules/vite/bin/vite.js");
  const r = spawnSync(
    process.execPath,
    [vite, "build", "--config", join(CONSOLE_DIR, "vite.config.ts"), "--outDir", tmp, "--logLevel", "warn"],
    {
      cwd: CONSOLE_DIR,
      stdio: ["ignore", "inherit", "inherit"],
    },
  );
  if (r.status !== 0) {
    rmSync(tmp, { recursive: true, force: true });
    throw new Error(`console build failed (vite exited with ${r.status ?? r.signal})`);
  }
  precompress(tmp);
  // Two test files may build at once: whoever swaps last wins, and a lost race is not an error as long
  // as a complete build is in place.
  const old = `${dist}.old-${process.pid}-${Date.now()}`;
  try {
    if (existsSync(dist)) renameSync(dist, old);
  } catch {
    // another builder moved it first
  }
  try {
    renameSync(tmp, dist);
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    if (!existsSync(join(dist, "index.html"))) throw err;
  }
  rmSync(old, { recursive: true, force: true });
  const ms = Math.round(performance.now() - started);
  opts.log?.(`[berth] console built in ${ms} ms -> ${dist}`);
  return { built: true, dist, ms };
}

/** Builds only when the build is missing or stale. */
export function ensureConsoleBuilt(opts: { dist?: string; log?: (line: string) => void } = {}): BuildResult {
  const dist = opts.dist ?? CONSOLE_DIST;
  if (isConsoleBuildCurrent(dist)) return { built: false, dist, ms: 0 };
  return buildConsole(opts);
}

const COMPRESSIBLE = /\.(js|css|html|svg|json|map|txt)$/;

function precompress(dir: string): void {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) precompress(p);
    else if (COMPRESSIBLE.test(e.name)) writeFileSync(`${p}.gz`, gzipSync(readFileSync(p), { level: 9 }));
  }
}

if (import.meta.main) {
  const force = process.argv.includes("--force");
  const r = force ? buildConsole({ log: console.log }) : ensureConsoleBuilt({ log: console.log });
  if (!r.built) console.log(`[berth] console build is current: ${r.dist}`);
}
