// The image is self-contained: built without a Docker daemon, its layers unpacked into an empty folder,
// each process's entry point runs there under chroot as the image's user (65532) with nothing from the host,
// loads its whole module graph and stops at its configuration check (exit 2 naming the missing settings).
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type LocalRegistry, startRegistry } from "@berth/e2e";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ENTRY } from "../pod.ts";
import { writeImage } from "./build.ts";
import { parseRef, pushLayout } from "./push.ts";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 300_000 });

const chroot = ["/usr/sbin/chroot", "/usr/bin/chroot"].find((p) => existsSync(p));
// chroot needs root (CAP_SYS_CHROOT); these machines run tests as root.
const canChroot = process.getuid?.() === 0 && chroot !== undefined;

let dir: string;
let digest: string;
let config: { config: { User: string; WorkingDir: string; Env: string[]; Entrypoint: string[] } };

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "berth-image-test-"));
  digest = writeImage(join(dir, "oci"), "test").digest;
  const blob = (d: string) => readFileSync(join(dir, "oci/blobs/sha256", d.slice(7)));
  const manifest = JSON.parse(blob(digest).toString()) as { config: { digest: string }; layers: { digest: string }[] };
  config = JSON.parse(blob(manifest.config.digest).toString());
  execFileSync("mkdir", [join(dir, "rootfs")]);
  for (const l of manifest.layers)
    execFileSync("tar", ["-xzf", join(dir, "oci/blobs/sha256", l.digest.slice(7)), "-C", join(dir, "rootfs")]);
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the Berth image", () => {
  it("runs as a non-root user, from /app, with no shell in it", () => {
    expect(config.config).toMatchObject({
      User: "65532:65532",
      WorkingDir: "/app",
      Entrypoint: ["/usr/local/bin/node"],
    });
    expect(existsSync(join(dir, "rootfs/bin/sh"))).toBe(false);
    expect(existsSync(join(dir, "rootfs/usr/local/bin/node"))).toBe(true);
  });

  it.skipIf(!canChroot).each(Object.entries(ENTRY))(
    "starts the %s entry point inside its own filesystem, up to the configuration check",
    (_, command) => {
      const [, script] = command;
      const r = spawnSync(
        chroot as string,
        ["--userspec=65532:65532", join(dir, "rootfs"), "/usr/local/bin/node", `/app/${script}`],
        {
          env: { PATH: "/usr/local/bin" },
          encoding: "utf8",
          timeout: 30_000,
        },
      );
      const out = `${r.stdout}${r.stderr}`;
      expect(out).not.toContain("ERR_MODULE_NOT_FOUND");
      expect(out).toMatch(/invalid (operator |gateway )?configuration/);
      expect(r.status, out).toBe(2);
    },
  );
});

describe("the Berth image in a registry", () => {
  let registry: LocalRegistry;
  beforeAll(async () => {
    registry = await startRegistry({ name: "image-push" });
  });
  afterAll(async () => {
    await registry?.stop();
  });
  const sha = (b: Buffer) => `sha256:${createHash("sha256").update(b).digest("hex")}`;
  const local = (d: string) => readFileSync(join(dir, "oci/blobs/sha256", d.slice(7)));

  it("is pushed without a daemon, and a pull by digest gives back the same manifest, config and layers", async () => {
    const ref = parseRef(`${registry.host}/berth/berth:test`);
    const pushed = await pushLayout(join(dir, "oci"), ref, { plainHttp: true });
    expect(pushed).toEqual({ digest, uploaded: 4, skipped: 0 });

    const base = `${registry.url}/v2/berth/berth`;
    const m = await fetch(`${base}/manifests/${digest}`, {
      headers: { accept: "application/vnd.oci.image.manifest.v1+json" },
    });
    expect(m.status).toBe(200);
    const manifest = Buffer.from(await m.arrayBuffer());
    expect(sha(manifest)).toBe(digest);
    expect(manifest.equals(local(digest))).toBe(true);
    const parsed = JSON.parse(manifest.toString()) as { config: { digest: string }; layers: { digest: string }[] };
    for (const d of [parsed.config.digest, ...parsed.layers.map((l) => l.digest)]) {
      const b = Buffer.from(await (await fetch(`${base}/blobs/${d}`)).arrayBuffer());
      expect(sha(b), d).toBe(d);
      expect(b.equals(local(d)), d).toBe(true);
    }
    // The tag names the same manifest.
    const tagged = await fetch(`${base}/manifests/test`, {
      method: "HEAD",
      headers: { accept: "application/vnd.oci.image.manifest.v1+json" },
    });
    expect(tagged.headers.get("docker-content-digest")).toBe(digest);
  });

  it("uploads nothing the registry already has", async () => {
    const again = await pushLayout(join(dir, "oci"), parseRef(`${registry.host}/berth/berth:again`), {
      plainHttp: true,
    });
    expect(again).toEqual({ digest, uploaded: 0, skipped: 4 });
  });

  it("refuses a layout of several images or an index, before sending anything", async () => {
    const index = JSON.parse(readFileSync(join(dir, "oci/index.json"), "utf8")) as { manifests: object[] };
    const two = join(dir, "two");
    cpSync(join(dir, "oci"), two, { recursive: true });
    writeFileSync(
      join(two, "index.json"),
      JSON.stringify({ ...index, manifests: [index.manifests[0], index.manifests[0]] }),
    );
    const nowhere = parseRef("127.0.0.1:9/berth/berth:two"); // nothing listens: a request would fail otherwise
    await expect(pushLayout(two, nowhere, { plainHttp: true })).rejects.toThrow(/names 2 manifest\(s\)/);
    const nested = { ...index.manifests[0], mediaType: "application/vnd.oci.image.index.v1+json" };
    writeFileSync(join(two, "index.json"), JSON.stringify({ ...index, manifests: [nested] }));
    await expect(pushLayout(two, nowhere, { plainHttp: true })).rejects.toThrow(
      /the first a application\/vnd\.oci\.image\.index/,
    );
  });

  it("refuses a reference without a registry host, or malformed", () => {
    expect(() => parseRef("berth:dev")).toThrow(/not an image reference/);
    expect(() => parseRef("registry.example.com/Berth:dev")).toThrow(/not an image reference/);
    expect(parseRef("registry.example.com:5000/berth/berth")).toEqual({
      host: "registry.example.com:5000",
      repository: "berth/berth",
      tag: "latest",
    });
  });
});
