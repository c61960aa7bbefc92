// Session images (JupyterLab, a web terminal, a code editor) built without Docker, beside Berth's own image
// (build.ts, whose layer and layout code this shares). Each is two layers: a Debian root filesystem made by
// debootstrap, shared by all three (the registry and the node keep it once), and the application on top,
// installed under chroot into an overlay of that root so the upper folder is exactly the layer.
//
// Every image follows the Jupyter Docker Stacks conventions: user jovyan (uid 1000, gid 100), home and
// working folder /home/jovyan, volumes under /home/jovyan/work. Each reads what the session pod sets
// (controllers/src/mirror/manifests.ts): BERTH_PORT (the port named `http`) and BERTH_BASE_PATH
// (/proxy/{cr}/, which the gateway forwards unchanged), and needs no token: the gateway authenticates.
//
// Built once per set of inputs: the key hashes the package lists, versions, the files put into the image
// and this builder's code; the layout is kept in ~/.cache/berth/images/<key> (BERTH_IMAGE_CACHE).
//   node cdk8s/src/image/sessions.ts build [jupyterlab|terminal|code ...] [--out <dir>]
//   node cdk8s/src/image/sessions.ts push --registry 127.0.0.1:PORT [jupyterlab|terminal|code ...]
// Needs root (debootstrap, chroot, mount) and debootstrap (scripts/ensure-debootstrap.sh).
// The parts:
//   - session-recipes.ts: what each image adds to the base, and its configuration;
//   - session-base.ts: the shared Debian root filesystem and its layer;
//   - session-steps.ts: the build steps under root (chroot, mounts, scratch, whiteouts, the cache's folders);
//   - session-key.ts: the cache's keys, over the inputs and the text of the builder's functions;
//   - here: one image built on the base under the cache's lock, pushed, and the command line.
import { spawnSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { layerOf, TAR_STABLE, tarOf, writeLayout } from "./build.ts";
import { parseRef, pushLayout } from "./push.ts";
import { baseKey, ensureBase, USER } from "./session-base.ts";
import { cacheRoot, code, hash } from "./session-key.ts";
import {
  addXterm,
  buildCodeServer,
  KINDS,
  npmPack,
  REPOSITORIES,
  recipes,
  type SessionImageKind,
} from "./session-recipes.ts";
import {
  chrootSh,
  clearScratch,
  LAYER_EXCLUDE,
  publish,
  removeBuildDir,
  run,
  SCRATCH,
  whiteoutsToOci,
} from "./session-steps.ts";

export { BASE_PACKAGES, baseKey, ensureBase, MIRROR, SUITE, USER } from "./session-base.ts";
export { cacheRoot } from "./session-key.ts";
export {
  CODE_SERVER_VERSION,
  JUPYTERLAB_VERSION,
  KINDS,
  PORTS,
  REPOSITORIES,
  type SessionImageKind,
} from "./session-recipes.ts";

const HERE = fileURLToPath(new URL(".", import.meta.url));
const FILES = join(HERE, "sessions");

export function imageKey(kind: SessionImageKind): string {
  const r = recipes()[kind];
  return hash(
    kind,
    baseKey(),
    r.script,
    ...r.inputs,
    ...r.files.flatMap(([f, to, mode]) => [readFileSync(join(FILES, f)), to, String(mode)]),
    JSON.stringify(r.config),
    JSON.stringify([SCRATCH, LAYER_EXCLUDE, TAR_STABLE]),
    code(buildLocked, whiteoutsToOci, writeLayout, ...(r.host ? [buildCodeServer, addXterm, npmPack] : [])),
  ).slice(0, 32);
}

export interface BuiltImage {
  kind: SessionImageKind;
  key: string;
  /** The OCI image layout, in the cache. */
  dir: string;
  digest: string;
  /** The tag it is pushed under: the key's first 12 characters. */
  tag: string;
  layers: { name: string; size: number; unpacked: number }[];
  /** Seconds this call took; `cached`: nothing was built. */
  seconds: number;
  cached: boolean;
}

function described(kind: SessionImageKind, key: string, dir: string, started: number, cached: boolean): BuiltImage {
  const index = JSON.parse(readFileSync(join(dir, "index.json"), "utf8")) as { manifests: { digest: string }[] };
  const digest = index.manifests[0]?.digest as string;
  const manifest = JSON.parse(readFileSync(join(dir, "blobs/sha256", digest.slice(7)), "utf8")) as {
    layers: { size: number; digest: string }[];
  };
  const sizes = JSON.parse(readFileSync(join(dir, "../sizes.json"), "utf8")) as { name: string; unpacked: number }[];
  return {
    kind,
    key,
    dir,
    digest,
    tag: key.slice(0, 12),
    layers: manifest.layers.map((l, i) => ({
      name: sizes[i]?.name ?? "",
      size: l.size,
      unpacked: sizes[i]?.unpacked ?? 0,
    })),
    seconds: (performance.now() - started) / 1000,
    cached,
  };
}

/**
 * Builds one session image into the cache, or finds it there; answers where its OCI layout is. Builds take
 * one lock for the whole cache (`flock`, so a killed build frees it): parallel test files and `npm start`
 * build each image once and share the base.
 */
export function buildSessionImage(kind: SessionImageKind, opts: { quiet?: boolean } = {}): BuiltImage {
  const started = performance.now();
  const key = imageKey(kind);
  const dir = join(cacheRoot(), key, "oci");
  if (existsSync(join(dir, "index.json"))) return described(kind, key, dir, started, true);
  mkdirSync(cacheRoot(), { recursive: true });
  const r = spawnSync(
    "flock",
    [join(cacheRoot(), ".build.lock"), process.execPath, fileURLToPath(import.meta.url), "build-locked", kind],
    {
      stdio: ["ignore", opts.quiet ? "pipe" : "inherit", opts.quiet ? "pipe" : "inherit"],
      encoding: "utf8",
      maxBuffer: 2 ** 26,
    },
  );
  if (r.status !== 0 || !existsSync(join(dir, "index.json")))
    throw new Error(
      `building the ${kind} session image failed (${r.status ?? r.signal}): ${`${r.stdout ?? ""}${r.stderr ?? ""}`.slice(-4000)}`,
    );
  return described(kind, key, dir, started, false);
}

/** The build itself; the caller holds the cache's lock. */
function buildLocked(kind: SessionImageKind, log: (s: string) => void): BuiltImage {
  const started = performance.now();
  const key = imageKey(kind);
  const dir = join(cacheRoot(), key);
  if (existsSync(join(dir, "oci/index.json"))) return described(kind, key, join(dir, "oci"), started, true);
  const base = ensureBase(log);
  const recipe = recipes()[kind];
  const tmp = mkdtempSync(join(cacheRoot(), `.${kind}-`));
  const [upper, work, merged] = ["upper", "work", "merged"].map((d) => join(tmp, d)) as [string, string, string];
  for (const d of [upper, work, merged]) mkdirSync(d);
  let mountedOverlay = false;
  try {
    log(`${kind}: building on base ${base.key.slice(0, 12)}`);
    run("mount", [
      "-t",
      "overlay",
      "overlay",
      "-o",
      `lowerdir=${base.rootfs},upperdir=${upper},workdir=${work}`,
      merged,
    ]);
    mountedOverlay = true;
    for (const [f, to, mode] of recipe.files) {
      mkdirSync(join(merged, dirname(to)), { recursive: true });
      cpSync(join(FILES, f), join(merged, to));
      chmodSync(join(merged, to), mode);
    }
    chrootSh(merged, recipe.script);
    recipe.host?.(merged);
    run("umount", [merged]);
    mountedOverlay = false;
    clearScratch(upper);
    whiteoutsToOci(upper);
    const app = layerOf(kind, tarOf(upper, ["."], undefined, LAYER_EXCLUDE, true));
    const out = join(tmp, "out");
    const oci = join(out, "oci");
    writeLayout(
      oci,
      key.slice(0, 12),
      [base.layer, app],
      { User: `${USER.uid}:${USER.gid}`, WorkingDir: USER.home, ...recipe.config },
      "cdk8s/src/image/sessions.ts",
    );
    writeFileSync(
      join(out, "sizes.json"),
      JSON.stringify([base.layer, app].map((l) => ({ name: l.name, unpacked: l.unpacked }))),
    );
    publish(out, dir);
    return described(kind, key, join(dir, "oci"), started, false);
  } finally {
    if (mountedOverlay) spawnSync("umount", ["-l", merged]);
    removeBuildDir(tmp);
  }
}

/** `host[:port]/sessions/<kind>:<tag>`: what a session pod's image names once pushed. */
export const sessionImageRef = (kind: SessionImageKind, registryHost: string, tag: string) =>
  `${registryHost}/${REPOSITORIES[kind]}:${tag}`;

export async function pushSessionImage(built: BuiltImage, registryHost: string) {
  const ref = parseRef(sessionImageRef(built.kind, registryHost, built.tag));
  const r = await pushLayout(built.dir, ref, { plainHttp: true });
  return { ref: `${ref.host}/${ref.repository}:${ref.tag}`, ...r };
}

/** The catalog's name for each image's kind (crds ImageKindName; api/src/bootstrap/localImages.ts). */
export const CATALOG_KINDS = { jupyterlab: "jupyterlab", terminal: "terminal", code: "code-server" } as const;

/**
 * Builds (or finds in the cache) and pushes all three to a registry the nodes pull from; answers the
 * references by catalog kind, as `applyLocalSessionImages(kube, refs)` takes them.
 */
export async function publishSessionImages(
  registryHost: string,
): Promise<Record<(typeof CATALOG_KINDS)[SessionImageKind], string>> {
  const refs = {} as Record<(typeof CATALOG_KINDS)[SessionImageKind], string>;
  for (const kind of KINDS)
    refs[CATALOG_KINDS[kind]] = (await pushSessionImage(buildSessionImage(kind), registryHost)).ref;
  return refs;
}

function parseKinds(names: string[]): SessionImageKind[] {
  const kinds = names.length ? names : KINDS;
  for (const k of kinds)
    if (!KINDS.includes(k as SessionImageKind))
      throw new Error(`unknown session image "${k}": one of ${KINDS.join(", ")}`);
  return kinds as SessionImageKind[];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { out: { type: "string" }, registry: { type: "string" } },
  });
  const [command, ...names] = positionals;
  if (command === "build-locked") {
    const built = buildLocked(parseKinds(names)[0] as SessionImageKind, (s) => console.log(s));
    console.log(`${built.kind}: built in ${built.seconds.toFixed(1)} s`);
    process.exit(0);
  }
  const usage =
    "usage: node cdk8s/src/image/sessions.ts build [jupyterlab|terminal|code ...] [--out <dir>]\n" +
    "       node cdk8s/src/image/sessions.ts push --registry <host:port> [jupyterlab|terminal|code ...]";
  if (command !== "build" && command !== "push") throw new Error(usage);
  if (command === "push" && !values.registry) throw new Error(usage);
  const mb = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`;
  for (const kind of parseKinds(names)) {
    const built = buildSessionImage(kind);
    console.log(
      `${kind}: ${built.digest} ${built.cached ? "from the cache" : "built"} in ${built.seconds.toFixed(1)} s (${built.dir})`,
    );
    for (const l of built.layers)
      console.log(
        `  ${l.name.padEnd(12)} ${mb(l.size).padStart(10)} compressed ${mb(l.unpacked).padStart(10)} unpacked`,
      );
    if (values.out) {
      const to = join(values.out, kind);
      rmSync(to, { recursive: true, force: true });
      cpSync(built.dir, to, { recursive: true });
      console.log(`  copied to ${to}`);
    }
    if (command === "push") {
      const r = await pushSessionImage(built, values.registry as string);
      console.log(`  ${r.ref}@${r.digest}: ${r.uploaded} blobs uploaded, ${r.skipped} already there`);
    }
  }
}

// For the other images made on this base (postgres.ts, whose key hashes its own text, imports included):
// the build steps, from where it has always taken them.
export { chrootSh, clearScratch, LAYER_EXCLUDE, publish, removeBuildDir, run, whiteoutsToOci };
