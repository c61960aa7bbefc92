// The build steps a session image's layers are made with, as root on this machine: a command that must
// succeed (run), a chroot with what a package manager needs mounted (chrootSh), a root filesystem cleared
// of a build's leftovers (clearScratch), an overlay's upper folder turned into an OCI layer's tree
// (whiteoutsToOci), and a cache entry published whole or removed without reaching through a mount.
// Their text is part of every image's key (session-key.ts code): edit a step and the images are new.
import { spawnSync } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";

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

// Exported by a list, not by `export` on each: a step's text, and with it every image's key, stays as it was.
export { chrootSh, clearScratch, LAYER_EXCLUDE, mountBuildEnv, publish, removeBuildDir, run, SCRATCH };
