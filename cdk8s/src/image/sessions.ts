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
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { type ImageConfig, type Layer, layerOf, ROOT, TAR_STABLE, tarOf, writeLayout } from "./build.ts";
import { parseRef, pushLayout } from "./push.ts";

const HERE = fileURLToPath(new URL(".", import.meta.url));
const FILES = join(HERE, "sessions");

export const SUITE = "bookworm";
export const MIRROR = "http://deb.debian.org/debian";
/** In every image: the shell and tools a person expects, Python, and an init that reaps zombies. */
export const BASE_PACKAGES = ["bash", "ca-certificates", "less", "procps", "python3", "python3-venv", "tini"];
export const JUPYTERLAB_VERSION = "4.6.6";
export const CODE_SERVER_VERSION = "4.139.1";

export const USER = { name: "jovyan", uid: 1000, gid: 100, home: "/home/jovyan" } as const;

export type SessionImageKind = "jupyterlab" | "terminal" | "code";
export const KINDS: SessionImageKind[] = ["jupyterlab", "terminal", "code"];

/** What a session pod runs each image with (controllers/src/mirror/manifests.ts APP_PORTS). */
export const PORTS: Record<SessionImageKind, number> = { jupyterlab: 8888, terminal: 7681, code: 8080 };

/** The repository each image is pushed to; its tag is the first 12 characters of its key. */
export const REPOSITORIES: Record<SessionImageKind, string> = {
  jupyterlab: "sessions/jupyterlab",
  terminal: "sessions/terminal",
  code: "sessions/code-server",
};

export const cacheRoot = (env: NodeJS.ProcessEnv = process.env) =>
  env.BERTH_IMAGE_CACHE ?? join(homedir(), ".cache/berth/images");

const hash = (...parts: (string | Buffer)[]) => {
  const h = createHash("sha256");
  for (const p of parts) h.update(p).update("\0");
  return h.digest("hex");
};
/**
 * The builder's code that makes a layer, by the names of its top-level functions: their source text as
 * written (not `Function.toString()`, which differs between Node's type stripping and a test runner's
 * transform). A change to them is a new image; an edit elsewhere is not.
 */
const code = (...fns: { name: string }[]) => {
  const files = [join(HERE, "sessions.ts"), join(HERE, "build.ts")].map((f) => readFileSync(f, "utf8"));
  return hash(
    ...fns.map(({ name }) => {
      const re = new RegExp(`^(?:export )?(?:function ${name}\\(|const ${name} = )[\\s\\S]*?^}`, "m");
      const found = files.map((f) => re.exec(f)?.[0]).find(Boolean);
      if (!found) throw new Error(`the builder has no top-level ${name}`);
      return found;
    }),
  );
};

interface Recipe {
  /** Runs under chroot in the overlay, as root, with the network. */
  script: string;
  /** Files from cdk8s/src/image/sessions/ copied in first: [file, path in the image, mode]. */
  files: [string, string, number][];
  /** Anything else the key must cover (versions, the Node binary). */
  inputs: string[];
  config: Omit<ImageConfig, "User" | "WorkingDir">;
  /** Runs on the host before the layer is taken, with the overlay's merged root (a build stage's output). */
  host?: (merged: string) => void;
}

const ENV_BASE = [
  "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
  `HOME=${USER.home}`,
  "SHELL=/bin/bash",
  "LANG=C.UTF-8",
  `NB_USER=${USER.name}`,
  `NB_UID=${USER.uid}`,
  `NB_GID=${USER.gid}`,
];
const APT = "apt-get -o Dpkg::Use-Pty=0 -qq";
const aptInstall = (packages: string[]) =>
  `${APT} update && DEBIAN_FRONTEND=noninteractive ${APT} install -y --no-install-recommends ${packages.join(" ")} >/dev/null`;

/** Node 24, the project's own (the `node` package), with its headers for native modules. */
const NODE_DIST = () => {
  const dist = [join(ROOT, "node_modules/node/node_modules"), join(ROOT, "node_modules")]
    .map((d) => join(d, `node-linux-${process.arch === "x64" ? "x64" : process.arch}`))
    .find((d) => existsSync(join(d, "include/node/node.h")));
  if (!dist) throw new Error("the `node` package's distribution (bin/node, include/node) is not installed: npm ci");
  return dist;
};
const nodeVersion = () => execFileSync(join(NODE_DIST(), "bin/node"), ["--version"], { encoding: "utf8" }).trim();

function recipes(): Record<SessionImageKind, Recipe> {
  const port = (k: SessionImageKind) => ({ [`${PORTS[k]}/tcp`]: {} as Record<string, never> });
  const volumes = { [`${USER.home}/work`]: {} as Record<string, never> };
  const label = (title: string, version: string) => ({
    "org.opencontainers.image.title": title,
    "org.opencontainers.image.version": version,
  });
  const terminalPackages = ["python3-terminado"];
  return {
    jupyterlab: {
      files: [["start-jupyterlab.sh", "/usr/local/bin/start-session", 0o755]],
      inputs: [`jupyterlab==${JUPYTERLAB_VERSION}`],
      // A virtual environment the user owns, as the Docker Stacks' conda: `pip install` in a cell works.
      script: [
        "python3 -m venv /opt/venv",
        `PIP_CERT=/etc/ssl/certs/ca-certificates.crt /opt/venv/bin/pip install -q --no-cache-dir --disable-pip-version-check jupyterlab==${JUPYTERLAB_VERSION}`,
        `chown -R ${USER.uid}:${USER.gid} /opt/venv`,
      ].join("\n"),
      config: {
        Env: [
          "PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
          ...ENV_BASE.slice(1),
          "JUPYTER_PORT=8888",
        ],
        Entrypoint: ["/usr/bin/tini", "-g", "--"],
        Cmd: ["/usr/local/bin/start-session"],
        ExposedPorts: port("jupyterlab"),
        Volumes: volumes,
        Labels: label("berth-session-jupyterlab", JUPYTERLAB_VERSION),
      },
    },
    terminal: {
      files: [
        ["terminal.py", "/usr/local/lib/berth/terminal.py", 0o644],
        ["terminal.html", "/usr/local/lib/berth/terminal.html", 0o644],
      ],
      inputs: [...terminalPackages, ...XTERM],
      script: aptInstall(terminalPackages),
      host: (merged) => addXterm(merged),
      config: {
        Env: ENV_BASE,
        Entrypoint: ["/usr/bin/tini", "-g", "--"],
        Cmd: ["/usr/bin/python3", "/usr/local/lib/berth/terminal.py"],
        ExposedPorts: port("terminal"),
        Volumes: volumes,
        Labels: label("berth-session-terminal", SUITE),
      },
    },
    code: {
      files: [["code-prefix.mjs", "/usr/local/lib/berth/code-prefix.mjs", 0o644]],
      inputs: [`code-server@${CODE_SERVER_VERSION}`, nodeVersion(), "git", "openssh-client"],
      script: aptInstall(["git", "openssh-client"]),
      host: (merged) => buildCodeServer(merged),
      config: {
        Env: ENV_BASE,
        Entrypoint: ["/usr/bin/tini", "-g", "--"],
        Cmd: ["/usr/local/bin/node", "/usr/local/lib/berth/code-prefix.mjs"],
        ExposedPorts: port("code"),
        Volumes: volumes,
        Labels: label("berth-session-code-server", CODE_SERVER_VERSION),
      },
    },
  };
}

const run = (cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; log?: string } = {}) => {
  const r = spawnSync(cmd, args, { encoding: "utf8", env: opts.env ?? process.env, maxBuffer: 2 ** 28 });
  if (r.status !== 0)
    throw new Error(
      `${opts.log ?? [cmd, ...args].join(" ")} failed (${r.error?.message ?? r.status ?? r.signal}):\n${`${r.stdout}${r.stderr}`.slice(-4000)}`,
    );
  return r.stdout;
};

/** Mounts what a package manager needs inside `root` (proc, dev, the host's DNS and CA bundle); answers the undo. */
function mountBuildEnv(root: string): () => void {
  const mounted: string[] = [];
  const mount = (args: string[], target: string) => {
    run("mount", [...args, target]);
    mounted.push(target);
  };
  try {
    mount(["-t", "proc", "proc"], join(root, "proc"));
    mount(["--bind", "/dev"], join(root, "dev"));
    for (const f of ["/etc/resolv.conf", "/etc/ssl/certs/ca-certificates.crt"]) {
      if (!existsSync(join(root, f))) writeFileSync(join(root, f), "");
      mount(["--bind", "-o", "ro", realpathSync(f)], join(root, f));
    }
  } catch (e) {
    for (const m of mounted.reverse()) spawnSync("umount", ["-l", m]);
    throw e;
  }
  return () => {
    for (const m of mounted.reverse()) run("umount", ["-l", m]);
  };
}

function chrootSh(root: string, script: string, env: Record<string, string> = {}) {
  const undo = mountBuildEnv(root);
  try {
    run("chroot", [root, "/bin/sh", "-euc", script], {
      env: {
        PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        HOME: "/root",
        LANG: "C.UTF-8",
        ...env,
      },
      log: `chroot ${root}: ${script.split("\n")[0]}`,
    });
  } finally {
    undo();
  }
}

/** What is left of a build in a root filesystem that no image needs. */
const SCRATCH = [
  "var/lib/apt/lists",
  "var/cache/apt",
  "var/cache/debconf/templates.dat-old",
  "var/log",
  "root/.cache",
  "root/.npm",
  "tmp",
  "run",
];
const clearScratch = (root: string) => {
  for (const p of SCRATCH) {
    const at = join(root, p);
    if (!existsSync(at)) continue;
    if (!lstatSync(at).isDirectory()) {
      rmSync(at);
      continue;
    }
    for (const e of readdirSync(at))
      if (!(p === "var/lib/apt/lists" && e === "partial")) rmSync(join(at, e), { recursive: true, force: true });
  }
};

const LAYER_EXCLUDE = ["./dev/*", "./proc/*", "./sys/*"];

interface CachedLayer {
  layer: Layer;
  rootfs: string;
  key: string;
}

function readLayer(dir: string, name: string): Layer {
  const meta = JSON.parse(readFileSync(join(dir, `${name}.json`), "utf8")) as Omit<Layer, "gz">;
  return { ...meta, gz: readFileSync(join(dir, `${name}.tar.gz`)) };
}
function saveLayer(dir: string, l: Layer) {
  writeFileSync(join(dir, `${l.name}.tar.gz`), l.gz);
  const { gz: _, ...meta } = l;
  writeFileSync(join(dir, `${l.name}.json`), JSON.stringify(meta));
}

/**
 * Removes a build's folder, never through a mount still inside it (a bind of the host's /dev, a chroot's
 * /proc, an overlay): those are unmounted lazily first, and a folder that still holds one is left alone.
 */
function removeBuildDir(dir: string) {
  const inside = () =>
    readFileSync("/proc/self/mounts", "utf8")
      .split("\n")
      .map((l) => (l.split(" ")[1] ?? "").replace(/\\040/g, " "))
      .filter((m) => m === dir || m.startsWith(`${dir}/`))
      .sort((a, b) => b.length - a.length);
  for (const m of inside()) spawnSync("umount", ["-l", m]);
  const left = inside();
  if (left.length) throw new Error(`not removing ${dir}: still mounted there: ${left.join(", ")}`);
  rmSync(dir, { recursive: true, force: true });
}

/** A folder made in `tmp` and renamed to `final` when whole, so a killed build never leaves a half cache entry. */
function publish(tmp: string, final: string) {
  rmSync(final, { recursive: true, force: true });
  mkdirSync(dirname(final), { recursive: true });
  renameSync(tmp, final);
}

export function baseKey(): string {
  return hash(
    "base",
    SUITE,
    MIRROR,
    BASE_PACKAGES.join(","),
    JSON.stringify(USER),
    JSON.stringify([SCRATCH, LAYER_EXCLUDE, TAR_STABLE]),
    code(ensureBase, debootstrapped, chrootSh, mountBuildEnv, clearScratch, tarOf, layerOf),
  ).slice(0, 32);
}

/**
 * debootstrap's output, kept on its own (keyed by its inputs alone): it is most of a cold build's time, and
 * a later step that fails, or a change to the steps after it, need not pay it again.
 */
function debootstrapped(log: (s: string) => void): string {
  const dir = join(cacheRoot(), `debootstrap-${hash(SUITE, MIRROR, BASE_PACKAGES.join(",")).slice(0, 32)}`);
  if (existsSync(join(dir, "rootfs"))) return join(dir, "rootfs");
  const tmp = mkdtempSync(join(cacheRoot(), ".debootstrap-"));
  try {
    const started = performance.now();
    log(`debootstrap ${SUITE} (minbase + ${BASE_PACKAGES.join(", ")})`);
    run("debootstrap", [
      "--variant=minbase",
      `--include=${BASE_PACKAGES.join(",")}`,
      SUITE,
      join(tmp, "rootfs"),
      MIRROR,
    ]);
    log(`debootstrap: ${((performance.now() - started) / 1000).toFixed(0)} s`);
    publish(tmp, dir);
    return join(dir, "rootfs");
  } catch (e) {
    removeBuildDir(tmp);
    throw e;
  }
}

/** The shared root filesystem: debootstrap's minimal Debian, the base packages and the jovyan user. */
export function ensureBase(log: (s: string) => void = () => {}): CachedLayer {
  const key = baseKey();
  const dir = join(cacheRoot(), `base-${key}`);
  if (existsSync(join(dir, "base.json"))) return { layer: readLayer(dir, "base"), rootfs: join(dir, "rootfs"), key };
  const started = performance.now();
  mkdirSync(cacheRoot(), { recursive: true });
  const tmp = mkdtempSync(join(cacheRoot(), ".base-"));
  try {
    const rootfs = join(tmp, "rootfs");
    run("cp", ["-a", debootstrapped(log), rootfs]);
    chrootSh(
      rootfs,
      [
        // Docker Stacks' user: gid 100 is Debian's `users` group.
        `useradd --no-log-init --uid ${USER.uid} --gid ${USER.gid} --create-home --home-dir ${USER.home} --shell /bin/bash ${USER.name}`,
        `mkdir -p ${USER.home}/work && chown -R ${USER.uid}:${USER.gid} ${USER.home}`,
        "apt-get clean",
      ].join("\n"),
    );
    // The runtime gives every container its own; the host's must not ship.
    writeFileSync(join(rootfs, "etc/resolv.conf"), "");
    writeFileSync(join(rootfs, "etc/hostname"), "");
    clearScratch(rootfs);
    const layer = layerOf("base", tarOf(rootfs, ["."], undefined, LAYER_EXCLUDE, true));
    saveLayer(tmp, layer);
    publish(tmp, dir);
    log(`base ${key.slice(0, 12)}: ${((performance.now() - started) / 1000).toFixed(0)} s`);
    return { layer, rootfs: join(dir, "rootfs"), key };
  } catch (e) {
    removeBuildDir(tmp);
    throw e;
  }
}

/**
 * Turns an overlay's upper folder into an OCI layer's tree: a deleted file (a 0/0 character device) becomes
 * `.wh.<name>`, an opaque folder (trusted.overlay.opaque) gets `.wh..wh..opq`.
 */
export function whiteoutsToOci(upper: string) {
  const walk = (d: string) => {
    for (const e of readdirSync(d)) {
      const p = join(d, e);
      const st = lstatSync(p);
      if (st.isCharacterDevice() && st.rdev === 0) {
        rmSync(p);
        writeFileSync(join(d, `.wh.${e}`), "");
      } else if (st.isDirectory()) walk(p);
    }
  };
  walk(upper);
  const opaque = run("python3", [
    "-c",
    "import os,sys\nfor r,ds,_ in os.walk(sys.argv[1]):\n for d in ds:\n  p=os.path.join(r,d)\n  try:\n   v=os.getxattr(p,'trusted.overlay.opaque',follow_symlinks=False)\n  except OSError:\n   continue\n  if v==b'y': print(p)",
    upper,
  ]);
  for (const p of opaque.split("\n").filter(Boolean)) writeFileSync(join(p, ".wh..wh..opq"), "");
}

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

/** xterm.js from npm: Debian's libjs-xterm (3.8) ships a browser file that only `require`s its modules. */
const XTERM = ["@xterm/xterm@6.0.0", "@xterm/addon-fit@0.11.0"];

/** Fetches npm packages' tarballs with the host's npm; answers where each was unpacked. */
function npmPack(specs: string[], into: string): string[] {
  const names = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", into, ...specs])) as {
    filename: string;
  }[];
  return names.map(({ filename }) => {
    const dir = join(into, filename.replace(/\.tgz$/, ""));
    mkdirSync(dir);
    run("tar", ["-xzf", join(into, filename), "-C", dir, "--strip-components=1", "--no-same-owner"]);
    return dir;
  });
}

/** The terminal page's browser side: xterm.js and its fit addon, beside terminal.py. */
function addXterm(merged: string) {
  const tmp = mkdtempSync(join(cacheRoot(), ".xterm-"));
  try {
    const [xterm, fit] = npmPack(XTERM, tmp) as [string, string];
    const to = join(merged, "usr/local/lib/berth/xterm");
    mkdirSync(to, { recursive: true });
    for (const [from, name] of [
      [join(xterm, "lib/xterm.js"), "xterm.js"],
      [join(xterm, "css/xterm.css"), "xterm.css"],
      [join(xterm, "LICENSE"), "LICENSE.xterm"],
      [join(fit, "lib/addon-fit.js"), "addon-fit.js"],
    ] as const) {
      cpSync(from, join(to, name));
      chmodSync(join(to, name), 0o644);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * code-server from npm, built in a stage of its own (the base plus a compiler, for its native modules) with
 * the project's Node 24 (its `engines`), then copied into the image without the compiler.
 */
function buildCodeServer(merged: string) {
  const node = NODE_DIST();
  const npm = dirname(dirname(realpathSync(execFileSync("sh", ["-c", "command -v npm"], { encoding: "utf8" }).trim())));
  const stage = mkdtempSync(join(cacheRoot(), ".code-stage-"));
  const [upper, work, root] = ["upper", "work", "merged"].map((d) => join(stage, d)) as [string, string, string];
  for (const d of [upper, work, root]) mkdirSync(d);
  // The stage's lower layers: the image being built over the base, as the overlay's merged view shows it.
  run("mount", ["-t", "overlay", "overlay", "-o", `lowerdir=${merged},upperdir=${upper},workdir=${work}`, root]);
  try {
    for (const d of ["bin", "include", "share"]) cpSync(join(node, d), join(root, "usr/local", d), { recursive: true });
    cpSync(npm, join(root, "opt/npm"), { recursive: true });
    chrootSh(
      root,
      [
        aptInstall([
          "build-essential",
          "pkg-config",
          "python3",
          "libkrb5-dev",
          "libx11-dev",
          "libxkbfile-dev",
          "libsecret-1-dev",
        ]),
        // Its postinstall runs `npm` itself.
        "ln -sf /opt/npm/bin/npm-cli.js /usr/local/bin/npm",
        `npm install -g --prefix /usr/local --no-audit --no-fund code-server@${CODE_SERVER_VERSION}`,
      ].join("\n"),
      {
        NODE_EXTRA_CA_CERTS: "/etc/ssl/certs/ca-certificates.crt",
        npm_config_nodedir: "/usr/local",
        npm_config_cache: "/tmp/npm-cache",
        npm_config_update_notifier: "false",
      },
    );
    // Into the image: Node and code-server only.
    cpSync(join(root, "usr/local/bin/node"), join(merged, "usr/local/bin/node"));
    cpSync(
      join(root, "usr/local/lib/node_modules/code-server"),
      join(merged, "usr/local/lib/node_modules/code-server"),
      {
        recursive: true,
        verbatimSymlinks: true,
      },
    );
  } finally {
    spawnSync("umount", ["-l", root]);
    removeBuildDir(stage);
  }
  // Runtime libraries of its native modules (Kerberos, keymaps, the keyring), without their -dev halves.
  chrootSh(merged, aptInstall(["libkrb5-3", "libgssapi-krb5-2", "libx11-6", "libxkbfile1", "libsecret-1-0"]));
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

// For the other images made on this base (postgres.ts): the build steps as they are, so their text, and
// with it every session image's key, stays the same.
export { chrootSh, clearScratch, LAYER_EXCLUDE, publish, removeBuildDir, run };
