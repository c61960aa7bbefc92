// The image builder's image, made here without Docker: what a build Job runs (BERTH_BUILDER_IMAGE,
// controllers/src/builds/manifests.ts). BuildKit's buildkitd and buildctl and RootlessKit built from Go
// modules (cdk8s/builder/go.mod, with the Go installed here: GOTOOLCHAIN=local), Debian's runc, newuidmap
// and newgidmap (uidmap: RootlessKit maps the subordinate ids of /etc/subuid with them; given file
// capabilities instead of the setuid bit) and a static
// busybox (the Job's script needs sh and sed), and our own entry, builder/buildctl-daemonless.sh. One layer,
// packed by build.ts's layout code, for uid 1000 (`user`, home /home/user, where the Job mounts BuildKit's
// state). docs/dev/images.md says why rootless.
//
// Built once per set of inputs: the Go binaries are keyed by the module files and the Go version
// (~/.cache/berth/images/builder-bin-<key>), the image by those, the Debian packages' versions, the entry
// and this code (~/.cache/berth/images/builder-<key>/oci; BERTH_IMAGE_CACHE moves both).
//   node cdk8s/src/image/builder.ts build [--out <dir>]
//   node cdk8s/src/image/builder.ts push --registry 127.0.0.1:PORT
// Needs root (the layer keeps owners and file capabilities), Go, apt-get, setcap (libcap2-bin).
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  chownSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { type ImageConfig, type Layer, layerOf, tarOf, writeLayout } from "./build.ts";
import { parseRef, pushLayout } from "./push.ts";
import { cacheRoot } from "./sessions.ts";

const HERE = fileURLToPath(new URL(".", import.meta.url));
const MODULE = join(HERE, "../../builder");
const ENTRY = join(HERE, "builder/buildctl-daemonless.sh");
/** Debian packages whose files go in (busybox-static is static; the others take their libraries along). */
export const DEBS = ["busybox-static", "runc", "uidmap"] as const;
export const USER = { name: "user", uid: 1000, gid: 1000, home: "/home/user" } as const;
/** The subordinate ids RootlessKit maps for the user (/etc/subuid, /etc/subgid). */
const SUBIDS = "100000:65536";
export const REPOSITORY = "berth/builder";
const TOOLS = ["buildkitd", "buildctl", "rootlesskit"] as const;
const PACKAGES: Record<(typeof TOOLS)[number], string> = {
  buildkitd: "github.com/moby/buildkit/cmd/buildkitd",
  buildctl: "github.com/moby/buildkit/cmd/buildctl",
  rootlesskit: "github.com/rootless-containers/rootlesskit/v2/cmd/rootlesskit",
};

const hash = (...parts: (string | Buffer)[]) => {
  const h = createHash("sha256");
  for (const p of parts) h.update(p).update("\0");
  return h.digest("hex");
};

const run = (cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) =>
  execFileSync(cmd, args, { encoding: "utf8", maxBuffer: 2 ** 26, stdio: ["ignore", "pipe", "pipe"], ...opts });

/** A module's version as cdk8s/builder/go.mod requires it. */
export function moduleVersion(module: string): string {
  const m = new RegExp(`^\\s*${module.replaceAll(".", "\\.")} (v\\S+)`, "m").exec(
    readFileSync(join(MODULE, "go.mod"), "utf8"),
  );
  if (!m) throw new Error(`cdk8s/builder/go.mod does not require ${module}`);
  return m[1] as string;
}

function goVersion(): string {
  return run("go", ["env", "GOVERSION"], { env: { ...process.env, GOTOOLCHAIN: "local" } }).trim();
}

const binKey = () =>
  hash(
    readFileSync(join(MODULE, "go.mod")),
    readFileSync(join(MODULE, "go.sum")),
    goVersion(),
    JSON.stringify(PACKAGES),
  ).slice(0, 32);

/** buildkitd, buildctl and rootlesskit, built once per module files and Go version. */
function binaries(log: (s: string) => void): string {
  const dir = join(cacheRoot(), `builder-bin-${binKey()}`);
  if (TOOLS.every((t) => existsSync(join(dir, t)))) return dir;
  const tmp = mkdtempSync(join(cacheRoot(), ".builder-bin-"));
  try {
    const started = performance.now();
    const buildkit = moduleVersion("github.com/moby/buildkit");
    log(
      `building BuildKit ${buildkit} and RootlessKit ${moduleVersion("github.com/rootless-containers/rootlesskit/v2")} (cold: several minutes)`,
    );
    run(
      "go",
      [
        "build",
        "-trimpath",
        "-ldflags",
        `-s -w -X github.com/moby/buildkit/version.Version=${buildkit}`,
        "-o",
        `${tmp}/`,
        ...TOOLS.map((t) => PACKAGES[t]),
      ],
      { cwd: MODULE, env: { ...process.env, GOTOOLCHAIN: "local", CGO_ENABLED: "0", GOFLAGS: "-mod=mod" } },
    );
    const reported = run(join(tmp, "buildkitd"), ["--version"]);
    if (!reported.includes(buildkit))
      throw new Error(`the built buildkitd reports "${reported.trim()}", not ${buildkit}`);
    log(`Go binaries: ${((performance.now() - started) / 1000).toFixed(0)} s`);
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
    return dir;
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
}

/** The candidate versions apt would download, `name=version`: part of the key, and what is fetched. */
function debVersions(): string[] {
  const out = run("apt-cache", ["show", "--no-all-versions", ...DEBS]);
  const versions = new Map<string, string>();
  for (const stanza of out.split(/\n\n+/)) {
    const name = /^Package: (\S+)/m.exec(stanza)?.[1];
    const version = /^Version: (\S+)/m.exec(stanza)?.[1];
    if (name && version) versions.set(name, version);
  }
  return DEBS.map((d) => {
    const v = versions.get(d);
    if (!v) throw new Error(`apt knows no ${d} (run apt-get update)`);
    return `${d}=${v}`;
  });
}

/** The libraries `ldd` names for a binary, copied into the root at the same paths. */
function copyLibraries(root: string, binary: string) {
  const out = spawnSync("ldd", [binary], { encoding: "utf8" });
  if (out.status !== 0) return; // static
  for (const line of out.stdout.split("\n")) {
    const lib = /(\/\S+) \(0x/.exec(line)?.[1];
    if (!lib || existsSync(join(root, lib))) continue;
    mkdirSync(join(root, dirname(lib)), { recursive: true });
    copyFileSync(realpathSync(lib), join(root, lib));
  }
}

/** Debian packages (`name` or `name=version`) downloaded by apt and unpacked into `<work>/x`; answers that folder. */
export function extractDebs(debs: readonly string[], work: string): string {
  const pkgs = join(work, "debs");
  mkdirSync(pkgs, { recursive: true });
  chmodSync(pkgs, 0o777); // apt's download user writes here
  run("apt-get", ["download", ...debs], { cwd: pkgs });
  const x = join(work, "x");
  for (const f of readdirSync(pkgs).filter((f) => f.endsWith(".deb"))) run("dpkg-deb", ["-x", join(pkgs, f), x]);
  return x;
}

/** The root filesystem, owners and modes as they must be in the image. */
function assemble(root: string, bin: string, debs: string[], work: string) {
  const x = extractDebs(debs, work);

  for (const d of ["usr/local/bin", "usr/bin", "usr/sbin", "bin", "etc", "tmp", "run"])
    mkdirSync(join(root, d), { recursive: true });
  chmodSync(join(root, "tmp"), 0o1777);
  const put = (from: string, to: string, mode: number) => {
    copyFileSync(from, join(root, to));
    chmodSync(join(root, to), mode);
  };
  put(join(x, "bin/busybox"), "bin/busybox", 0o755);
  // The applets as links, as busybox's own images have them.
  for (const applet of run(join(x, "bin/busybox"), ["--list"]).split("\n").filter(Boolean))
    if (applet !== "busybox" && !existsSync(join(root, "bin", applet)))
      symlinkSync("busybox", join(root, "bin", applet));
  put(join(x, "usr/sbin/runc"), "usr/bin/runc", 0o755);
  copyLibraries(root, join(x, "usr/sbin/runc"));
  // They write the user namespace's maps for the subordinate ids, which uid 1000 may not. With a file
  // capability, not Debian's setuid bit: run as euid 0 in a pod without CAP_SYS_ADMIN, the kernel refuses
  // their write to uid_map (the opener must own the new namespace or hold CAP_SYS_ADMIN over it).
  for (const [t, cap] of [
    ["newuidmap", "cap_setuid+ep"],
    ["newgidmap", "cap_setgid+ep"],
  ] as const) {
    put(join(x, "usr/bin", t), `usr/bin/${t}`, 0o755);
    run("setcap", [cap, join(root, "usr/bin", t)]);
    copyLibraries(root, join(x, "usr/bin", t));
  }
  for (const t of TOOLS) put(join(bin, t), `usr/local/bin/${t}`, 0o755);
  put(ENTRY, "usr/local/bin/buildctl-daemonless.sh", 0o755);

  const { name, uid, gid, home } = USER;
  writeFileSync(
    join(root, "etc/passwd"),
    `root:x:0:0:root:/root:/bin/sh\n${name}:x:${uid}:${gid}:${name}:${home}:/bin/sh\n`,
  );
  writeFileSync(join(root, "etc/group"), `root:x:0:\n${name}:x:${gid}:\n`);
  writeFileSync(join(root, "etc/subuid"), `${name}:${SUBIDS}\n`);
  writeFileSync(join(root, "etc/subgid"), `${name}:${SUBIDS}\n`);
  // BuildKit's rootless state (the Job mounts an emptyDir at the last folder) and the registry login.
  for (const d of [".local/share/buildkit", ".docker"]) mkdirSync(join(root, home, d), { recursive: true });
  for (const d of [home, `${home}/.local`, `${home}/.local/share`, `${home}/.local/share/buildkit`, `${home}/.docker`])
    chownSync(join(root, d), uid, gid);
  // Times fixed, so the same inputs make the same layer.
  run("find", [root, "-exec", "touch", "-h", "-d", "@0", "{}", "+"]);
}

const CONFIG: ImageConfig = {
  User: `${USER.uid}:${USER.gid}`,
  WorkingDir: USER.home,
  Env: ["PATH=/usr/local/bin:/usr/bin:/bin", `HOME=${USER.home}`, `USER=${USER.name}`],
  Entrypoint: ["/usr/local/bin/buildctl-daemonless.sh"],
  Labels: { "org.opencontainers.image.title": "berth-builder" },
};

export function imageKey(binKey: string, debs: string[]): string {
  return hash(
    binKey,
    ...debs,
    readFileSync(ENTRY),
    JSON.stringify([CONFIG, USER, SUBIDS]),
    // The builder's code as files, not functions' text: a test runner's transform changes that text, and
    // the key must be the same in every process that computes it.
    ...["builder.ts", "build.ts"].map((f) => readFileSync(join(HERE, f))),
  ).slice(0, 32);
}

export interface BuiltBuilder {
  key: string;
  /** The OCI image layout, in the cache. */
  dir: string;
  digest: string;
  /** The tag it is pushed under: the key's first 12 characters. */
  tag: string;
  layer: { size: number; unpacked: number };
  seconds: number;
  cached: boolean;
}

function described(key: string, dir: string, started: number, cached: boolean): BuiltBuilder {
  const meta = JSON.parse(readFileSync(join(dir, "..", "builder.json"), "utf8")) as {
    digest: string;
    size: number;
    unpacked: number;
  };
  return {
    key,
    dir,
    digest: meta.digest,
    tag: key.slice(0, 12),
    layer: { size: meta.size, unpacked: meta.unpacked },
    seconds: (performance.now() - started) / 1000,
    cached,
  };
}

export const builderKey = () => imageKey(binKey(), debVersions());

/**
 * The builder image from the cache, or built into it (the Go binaries first, once). One build at a time per
 * cache (`flock`: a killed build frees it).
 */
export function buildBuilderImage(opts: { quiet?: boolean } = {}): BuiltBuilder {
  const started = performance.now();
  const key = builderKey();
  const dir = join(cacheRoot(), `builder-${key}`, "oci");
  if (existsSync(join(dir, "index.json"))) return described(key, dir, started, true);
  mkdirSync(cacheRoot(), { recursive: true });
  const r = spawnSync(
    "flock",
    [join(cacheRoot(), ".builder.lock"), process.execPath, fileURLToPath(import.meta.url), "build-locked"],
    {
      stdio: ["ignore", opts.quiet ? "pipe" : "inherit", opts.quiet ? "pipe" : "inherit"],
      encoding: "utf8",
      maxBuffer: 2 ** 26,
    },
  );
  if (r.status !== 0 || !existsSync(join(dir, "index.json")))
    throw new Error(
      `building the builder image failed (${r.status ?? r.signal}): ${`${r.stdout ?? ""}${r.stderr ?? ""}`.slice(-4000)}`,
    );
  return described(key, dir, started, false);
}

/** The build itself; the caller holds the cache's lock. */
function buildLocked(log: (s: string) => void) {
  const debs = debVersions();
  const bin = binaries(log);
  const key = imageKey(binKey(), debs);
  const dir = join(cacheRoot(), `builder-${key}`);
  if (existsSync(join(dir, "oci/index.json"))) return;
  const started = performance.now();
  const tmp = mkdtempSync(join(cacheRoot(), ".builder-"));
  try {
    const root = join(tmp, "rootfs");
    mkdirSync(root);
    assemble(root, bin, debs, tmp);
    const layer: Layer = layerOf("builder", tarOf(root, ["."], undefined, [], true));
    const digest = writeLayout(join(tmp, "oci"), key.slice(0, 12), [layer], CONFIG, "cdk8s/src/image/builder.ts");
    writeFileSync(join(tmp, "builder.json"), JSON.stringify({ digest, size: layer.size, unpacked: layer.unpacked }));
    for (const d of ["rootfs", "debs", "x"]) rmSync(join(tmp, d), { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
    log(`builder image ${digest}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
}

/** `host[:port]/berth/builder:<tag>`: what BERTH_BUILDER_IMAGE names once pushed. */
export const builderImageRef = (registryHost: string, tag: string) => `${registryHost}/${REPOSITORY}:${tag}`;

export async function pushBuilderImage(built: BuiltBuilder, registryHost: string) {
  const ref = parseRef(builderImageRef(registryHost, built.tag));
  const r = await pushLayout(built.dir, ref, { plainHttp: true });
  return { ref: `${ref.host}/${ref.repository}:${ref.tag}`, ...r };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { out: { type: "string" }, registry: { type: "string" } },
  });
  const [command] = positionals;
  if (command === "build-locked") {
    buildLocked((s) => console.log(s));
    process.exit(0);
  }
  const usage =
    "usage: node cdk8s/src/image/builder.ts build [--out <dir>]\n" +
    "       node cdk8s/src/image/builder.ts push --registry <host:port>";
  if ((command !== "build" && command !== "push") || (command === "push" && !values.registry)) throw new Error(usage);
  const built = buildBuilderImage();
  const mb = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`;
  console.log(
    `builder: ${built.digest} ${built.cached ? "from the cache" : "built"} in ${built.seconds.toFixed(1)} s (${built.dir}); ${mb(built.layer.size)} compressed, ${mb(built.layer.unpacked)} unpacked`,
  );
  if (values.out) {
    rmSync(values.out, { recursive: true, force: true });
    cpSync(built.dir, values.out, { recursive: true });
    console.log(`copied to ${values.out}`);
  }
  if (command === "push") {
    const r = await pushBuilderImage(built, values.registry as string);
    console.log(`${r.ref}@${r.digest}: ${r.uploaded} blobs uploaded, ${r.skipped} already there`);
  }
}
