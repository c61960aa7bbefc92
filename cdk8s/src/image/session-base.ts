// The root filesystem every session image shares (its first layer): debootstrap's minimal Debian, the base
// packages and the Docker Stacks user, made once per key and kept in the cache with its layer.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Layer, layerOf, TAR_STABLE, tarOf } from "./build.ts";
import { cacheRoot, code, hash } from "./session-key.ts";
import {
  chrootSh,
  clearScratch,
  LAYER_EXCLUDE,
  mountBuildEnv,
  publish,
  removeBuildDir,
  run,
  SCRATCH,
} from "./session-steps.ts";

export const SUITE = "bookworm";
export const MIRROR = "http://deb.debian.org/debian";
/** In every image: the shell and tools a person expects, Python, and an init that reaps zombies. */
export const BASE_PACKAGES = ["bash", "ca-certificates", "less", "procps", "python3", "python3-venv", "tini"];

export const USER = { name: "jovyan", uid: 1000, gid: 100, home: "/home/jovyan" } as const;

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
