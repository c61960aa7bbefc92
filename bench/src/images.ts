// Private images (docs/dev/images.md). Figures, in one run, each next to its baseline:
//   1. import throughput, local registry to local registry (both go-containerregistry's, in memory), of a
//      --gb GiB image in 256 MiB layers: the import's copy (GET, SHA-256 and length check, streamed PUT)
//      vs. the registry's own ingest of the same bytes (a plain streamed PUT of generated data);
//   2. the copying process's resident memory while it imports that image (peak above the start): it
//      streams, so this stays flat whatever the size;
//   3. the 20-image gate under --parallel parallel POST /api/v1/images/import of one member: accepted
//      (must be exactly 20), refused, latency p50/p99, vs. the same number of GET /api/v1/images/private.
//
//   node bench/src/images.ts [--gb=2] [--parallel=50]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { parseConfig, startApi, startPostgres } from "@berth/api";
import { AccessTokens, copyImage, RegistryClient } from "@berth/api/testing";
import { pseudoRandomStream, pushBlobStream, pushImage, startRegistry } from "@berth/e2e";
import { answering } from "./api.ts";
import { upperPercentile } from "./kit/percentile.ts";

const { values } = parseArgs({
  options: { gb: { type: "string", default: "2" }, parallel: { type: "string", default: "50" } },
});
const GIB = 1024 ** 3;
const LAYER = 256 * 1024 ** 2;
const total = Math.round(Number(values.gb) * GIB);
const PARALLEL = Number(values.parallel);
const mb = (bytes: number, ms: number) => (bytes / 1024 ** 2 / (ms / 1000)).toFixed(1);

async function main() {
  // The baseline first: the registry ingesting the same bytes, generated here (no source, no check).
  const base = await startRegistry({ name: "bench-ingest" });
  let ingestMs = 0;
  try {
    const { createHash } = await import("node:crypto");
    for (let i = 0; i * LAYER < total; i++) {
      const size = Math.min(LAYER, total - i * LAYER);
      const make = () => pseudoRandomStream(size, `layer-${i}`);
      const h = createHash("sha256");
      for await (const c of make()) h.update(c as Buffer);
      const t0 = performance.now();
      await pushBlobStream(base.url, "bench/raw", `sha256:${h.digest("hex")}`, size, make);
      ingestMs += performance.now() - t0;
    }
  } finally {
    await base.stop();
  }
  const { result, copyMs, rss0, peak } = await throughputOnly();
  console.log("");
  console.log("import throughput, local registry -> local registry");
  console.log(
    `  import (GET + verify + streamed PUT)   ${mb(result.size, copyMs)} MB/s   (${(result.size / GIB).toFixed(2)} GiB in ${(copyMs / 1000).toFixed(1)} s, ${result.copied} blobs)`,
  );
  console.log(
    `  baseline: registry ingest (PUT only)   ${mb(total, ingestMs)} MB/s   ratio ${(Number(mb(result.size, copyMs)) / Number(mb(total, ingestMs))).toFixed(2)}`,
  );
  console.log("memory of the copying process while importing");
  console.log(
    `  resident at start ${(rss0 / 1024 ** 2).toFixed(0)} MiB, peak ${(peak / 1024 ** 2).toFixed(0)} MiB: +${((peak - rss0) / 1024 ** 2).toFixed(0)} MiB for a ${(result.size / GIB).toFixed(2)} GiB image`,
  );

  await gate();
}

async function throughputOnly() {
  const [source, target] = await Promise.all([
    startRegistry({ name: "bench-source" }),
    startRegistry({ name: "bench-target" }),
  ]);
  try {
    const stream = [];
    for (let i = 0; i * LAYER < total; i++) {
      const size = Math.min(LAYER, total - i * LAYER);
      stream.push({ size, make: () => pseudoRandomStream(size, `layer-${i}`) });
    }
    console.log(`seeding a ${(total / GIB).toFixed(2)} GiB image in ${stream.length} layers...`);
    await pushImage(source.url, "bench/big", "1", { layers: [], stream });
    const rss0 = process.memoryUsage().rss;
    let peak = rss0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 50);
    const started = performance.now();
    const result = await copyImage({
      source: new RegistryClient({ baseUrl: source.url }),
      sourceRepository: "bench/big",
      sourceRef: "1",
      target: new RegistryClient({ baseUrl: target.url }),
      targetRepository: "org/usr/big",
      targetTag: "1",
      platforms: ["linux/amd64"],
      maxBytes: 64 * GIB,
      concurrency: 3,
    });
    const copyMs = performance.now() - started;
    clearInterval(sampler);
    return { result, copyMs, rss0, peak };
  } finally {
    await Promise.all([source.stop(), target.stop()]);
  }
}

async function gate() {
  const dir = mkdtempSync(join(tmpdir(), "berth-bench-images-"));
  const pg = await startPostgres({ dataDir: join(dir, "pg") });
  const source = await startRegistry({ name: "bench-gate" });
  try {
    const config = parseConfig({
      DATABASE_URL: pg.urlFor("postgres"),
      BERTH_JWT_SECRET: "bench-secret-bench-secret-bench-secret",
      BERTH_API_HOST: "127.0.0.1",
      BERTH_API_PORT: "0",
      BERTH_LOG_LEVEL: "warn",
      BERTH_REGISTRY_URL: source.url,
      BERTH_IMAGE_INTERNAL_REGISTRIES: source.host,
      BERTH_WEBHOOK_SECRET_KEYS: `bench:${Buffer.alloc(32, 1).toString("base64")}`,
      BERTH_METRICS_PORT: "0",
    });
    const api = await startApi({ config, startupTasks: [] });
    try {
      const db = api.deps.db;
      await db("users").insert({ id: "usr_bench", email: "bench@example.test", password_hash: "x" });
      await db("organizations").insert({ id: "org_bench", name: "Bench", slug: "bench" });
      await db("memberships").insert({ user_id: "usr_bench", organization_id: "org_bench", role: "member" });
      const { token } = await new AccessTokens({ secret: config.auth.jwtSecret.reveal(), ttlSeconds: 900 }).issue({
        userId: "usr_bench",
        tokenVersion: 0,
      });
      // Answers as values: the refusals' statuses and codes are what this counts.
      const call = answering(() => api.url);
      const member = { token };
      const timed = async <T>(send: () => Promise<T>) => {
        const t0 = performance.now();
        const answer = await send();
        return { answer, ms: performance.now() - t0 };
      };
      await call(member, "listPrivateImages"); // warm
      const reads = await Promise.all(
        Array.from({ length: PARALLEL }, () => timed(() => call(member, "listPrivateImages"))),
      );
      const writes = await Promise.all(
        Array.from({ length: PARALLEL }, (_, i) =>
          timed(() => call(member, "importImage", { body: { reference: `${source.host}/bench/x:1`, tag: `t${i}` } })),
        ),
      );
      const accepted = writes.filter((w) => w.answer.status === 202).length;
      const refused = writes.filter(
        (w) => w.answer.status === 403 && !w.answer.ok && w.answer.code === "quota_exceeded",
      ).length;
      console.log(`the 20-image gate, ${PARALLEL} parallel imports by one member`);
      console.log(
        `  accepted ${accepted} (must be 20), refused quota_exceeded ${refused}, other ${PARALLEL - accepted - refused}`,
      );
      console.log(
        `  POST /images/import  p50 ${upperPercentile(
          writes.map((w) => w.ms),
          50,
        ).toFixed(1)} ms  p99 ${upperPercentile(
          writes.map((w) => w.ms),
          99,
        ).toFixed(1)} ms`,
      );
      console.log(
        `  baseline GET /images/private  p50 ${upperPercentile(
          reads.map((w) => w.ms),
          50,
        ).toFixed(1)} ms  p99 ${upperPercentile(
          reads.map((w) => w.ms),
          99,
        ).toFixed(1)} ms`,
      );
    } finally {
      await api.stop();
    }
  } finally {
    await source.stop();
    await pg.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
