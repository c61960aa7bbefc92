// biome-ignore-all lint/suspicious/noExplicitAny: manifests as they come
// Versions of Berth as the bed installs them (bed.ts): this checkout's (headRelease), and an earlier landed
// one for the upgrade test (releaseAt): that commit's own image, made by that commit's own builder from that
// commit's tree, and that commit's own committed manifests (cdk8s/dist/bed), which only this checkout's bed
// fills in (the image's tag, the registered cluster id). The previous version is BERTH_UPGRADE_FROM, default
// UPGRADE_FROM: move it forward to the last commit that passed CI when a version lands.
import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import {
  BED_GPU_CLUSTER,
  BED_REGISTRY,
  ENVIRONMENTS,
  type Environment,
  synthEnvironment,
} from "@berth/cdk8s/environments";
import { cacheRoot } from "@berth/cdk8s/image/sessions";
import { ensureConsoleBuilt } from "@berth/console";
import { parseAllDocuments } from "yaml";

const run = promisify(execFile);
const ROOT = new URL("../../../", import.meta.url).pathname;

/**
 * A version of Berth as the bed installs it: its image and its manifests for the `bed` environment. HEAD's
 * is synthesised here (headRelease); an earlier commit's comes from that commit (releaseAt).
 */
export interface Release {
  /** For logs: "HEAD", a commit. */
  name: string;
  /** Its image's tag in the bed's registry. */
  tag: string;
  /** Builds its image as an OCI layout (into `dir` or a cache of its own) and says where the layout is. */
  buildImage(dir: string, log: (line: string) => void): Promise<string>;
  /** Its manifests, file by file (00-crds, 10-control-plane, 20-gpu-…), the GPU chart carrying `clusterId`. */
  charts(clusterId?: string): { file: string; objs: any[] }[];
}

/** This checkout's version: the image cdk8s/src/image/build.ts makes here and `env` synthesised. */
export function headRelease(env: Environment = ENVIRONMENTS.bed as Environment): Release {
  return {
    name: "HEAD",
    tag: "bed",
    async buildImage(dir, log) {
      // The image carries console/dist when it exists (cdk8s/src/image/build.ts).
      const c = ensureConsoleBuilt({ log });
      if (c.built) log(`[install] console built in ${(c.ms / 1000).toFixed(1)} s`);
      await run(process.execPath, [join(ROOT, "cdk8s/src/image/build.ts"), dir, "--tag", "bed"], {
        maxBuffer: 2 ** 24,
      });
      return dir;
    },
    charts(clusterId) {
      const gpuName = Object.keys(env.gpuClusters)[0] ?? BED_GPU_CLUSTER;
      const gpu = env.gpuClusters[gpuName];
      const withId: Environment =
        clusterId && gpu ? { ...env, gpuClusters: { ...env.gpuClusters, [gpuName]: { ...gpu, clusterId } } } : env;
      return synthEnvironment(withId).map(({ file, chart }) => ({ file, objs: chart.toJson() as any[] }));
    },
  };
}

/** The last version that passed CI: move it forward when a newer one lands. */
export const UPGRADE_FROM = "d7a7721";
export const upgradeFrom = (env: NodeJS.ProcessEnv = process.env) => env.BERTH_UPGRADE_FROM || UPGRADE_FROM;

/** What the committed `bed` manifests name and the install replaces (cdk8s/src/environments.ts). */
const BED_IMAGE = `${BED_REGISTRY}/berth:bed`;
const PLACEHOLDER_CLUSTER_ID = "clu_bed";

const git = (...args: string[]) => execFileSync("git", ["-C", ROOT, ...args], { encoding: "utf8", maxBuffer: 2 ** 26 });

/**
 * Whether `ref` names a commit of this clone: a shallow clone (one commit deep, as some CI checkouts are)
 * has no earlier version to install, and says so instead of failing on git's words.
 */
export function releaseKnown(ref: string): { ok: true } | { ok: false; reason: string } {
  try {
    git("rev-parse", "--verify", "--quiet", `${ref}^{commit}`);
    return { ok: true };
  } catch {
    return {
      ok: false,
      reason: `${ref} is not in this clone's history (a shallow clone?): fetch it, or name another with BERTH_UPGRADE_FROM`,
    };
  }
}

/** Migration files by name (api/src/db/migrations: a timestamp, a name, `.ts`), tests and the index left out. */
const migrationNames = (files: string[]) =>
  files
    .filter((f) => /^\d{14}_[\w]+\.ts$/.test(f) && !f.endsWith(".test.ts"))
    .map((f) => f.slice(0, -3))
    .sort();

/**
 * The migrations this checkout has that `ref` has not: what an upgrade from `ref` applies, and what makes a
 * rollback to it refused (migrations are forward-only, docs/deploy.md "Roll back").
 */
export function migrationsSince(ref: string): string[] {
  const before = new Set(migrationNames(git("ls-tree", "--name-only", `${ref}:api/src/db/migrations`).split("\n")));
  return migrationNames(readdirSync(join(ROOT, "api/src/db/migrations"))).filter((m) => !before.has(m));
}

/** Every string equal to a key of `to` replaced by its value. */
function replaced(x: any, to: Record<string, string>): any {
  if (typeof x === "string") return to[x] ?? x;
  if (Array.isArray(x)) return x.map((v) => replaced(v, to));
  if (x && typeof x === "object") return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, replaced(v, to)]));
  return x;
}

/**
 * The version at `ref`. Its image is built once per commit and kept in the image cache
 * (~/.cache/berth/images/release-<commit>/oci): the commit's tree from `git archive`, its dependencies
 * (this checkout's node_modules hard-linked when the lock file is the same, else `npm ci`), its console
 * and its image built by its own scripts.
 */
export function releaseAt(ref: string): Release {
  const commit = git("rev-parse", "--verify", `${ref}^{commit}`).trim();
  const tag = commit.slice(0, 12);
  return {
    name: `${ref} (${tag})`,
    tag,
    async buildImage(_dir, log) {
      const cached = join(cacheRoot(), `release-${commit}`);
      const oci = join(cached, "oci");
      if (existsSync(join(oci, "index.json"))) return oci;
      const started = performance.now();
      const src = join(cached, "src");
      rmSync(cached, { recursive: true, force: true });
      mkdirSync(src, { recursive: true });
      try {
        execFileSync("sh", ["-c", `git -C "${ROOT}" archive "${commit}" | tar -x -C "${src}"`]);
        const sameLock =
          readFileSync(join(src, "package-lock.json"), "utf8") ===
          readFileSync(join(ROOT, "package-lock.json"), "utf8");
        // The workspaces' links in node_modules are relative, so hard-linked copies point into the old tree.
        if (sameLock) await run("cp", ["-al", join(ROOT, "node_modules"), join(src, "node_modules")]);
        else await run("npm", ["ci", "--no-audit", "--no-fund"], { cwd: src, maxBuffer: 2 ** 26 });
        const nodeEnv = { ...process.env, BERTH_IMAGE_CACHE: cacheRoot() };
        await run(process.execPath, [join(src, "console/src/server/build.ts"), "--force"], {
          cwd: src,
          env: nodeEnv,
          maxBuffer: 2 ** 26,
        });
        const out = join(cached, "oci.tmp");
        await run(process.execPath, [join(src, "cdk8s/src/image/build.ts"), out, "--tag", tag], {
          cwd: src,
          env: nodeEnv,
          maxBuffer: 2 ** 26,
        });
        renameSync(out, oci);
        log(
          `[release] ${ref}: image built from its own tree in ${((performance.now() - started) / 1000).toFixed(1)} s (${sameLock ? "node_modules linked" : "npm ci"})`,
        );
      } finally {
        rmSync(src, { recursive: true, force: true });
      }
      return oci;
    },
    charts(clusterId) {
      const files = git("ls-tree", "--name-only", `${commit}:cdk8s/dist/bed`)
        .split("\n")
        .filter((f) => f.endsWith(".yaml"))
        .sort();
      const to: Record<string, string> = {
        [BED_IMAGE]: `${BED_REGISTRY}/berth:${tag}`,
        ...(clusterId ? { [PLACEHOLDER_CLUSTER_ID]: clusterId } : {}),
      };
      return files.map((file) => ({
        file,
        objs: parseAllDocuments(git("show", `${commit}:cdk8s/dist/bed/${file}`))
          .map((d) => d.toJS())
          .filter((o) => o)
          .map((o) => replaced(o, to)),
      }));
    },
  };
}
