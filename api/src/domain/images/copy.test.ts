import { createHash } from "node:crypto";
import type { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { copyImage } from "./copy.ts";
import { MANIFEST_TYPES, type RegistryClient } from "./registry.ts";

const digestOf = (s: string) => `sha256:${createHash("sha256").update(s).digest("hex")}`;

describe("copying an image", () => {
  it("is cancelled when the cancel comes while the target is asked whether it has a blob", async () => {
    const cancel = new AbortController();
    const manifest = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: MANIFEST_TYPES.ociManifest,
        config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: digestOf("c"), size: 1e9 },
        layers: [],
      }),
    );
    // A source that sends a byte now and then for as long as its reader wants them, as a slow registry does.
    const source = {
      getManifest: async () => ({ mediaType: MANIFEST_TYPES.ociManifest, bytes: manifest, digest: undefined }),
      blob: async (_r: string, _d: string, signal: AbortSignal) =>
        new ReadableStream<Uint8Array>({
          async pull(c) {
            await sleep(20);
            if (signal.aborted) c.error(signal.reason);
            else c.enqueue(new Uint8Array([1]));
          },
        }),
    };
    const target = {
      // The stop lands while this HEAD is out.
      hasBlob: async () => {
        cancel.abort();
        return false;
      },
      pushBlob: async (_r: string, _d: string, _n: number, body: Readable) => {
        for await (const _ of body);
      },
      putManifest: async () => undefined,
    };
    const copied = copyImage({
      source: source as unknown as RegistryClient,
      sourceRepository: "library/x",
      sourceRef: "latest",
      target: target as unknown as RegistryClient,
      targetRepository: "u/x",
      targetTag: "latest",
      platforms: ["linux/amd64"],
      maxBytes: 2e9,
      concurrency: 1,
      idleTimeoutMs: 60_000,
      signal: cancel.signal,
    }).then(
      () => "copied",
      (e: Error) => e.message,
    );
    const outcome = await Promise.race([copied, sleep(3000).then(() => "still copying")]);
    expect(outcome).toBe("the import was cancelled");
  });
});
