// `npm start`'s sessions on the real node (docs/dev/real-sessions.md), where it runs: its cluster's GPU
// sessions steered onto it (the RuntimeClass), the preset that fits this machine, and the session images
// (cdk8s/src/image/sessions.ts) built in the background, pushed to Berth's registry and offered in the catalog
// under the registry relay's address (builds.ts), which the node's pods pull through. A first build takes
// about 15 minutes: npm start does not wait for it, and a failed one is a line, not a failed start.
import { join, relative } from "node:path";
import { buildSessionImage, KINDS } from "@berth/cdk8s/image/sessions";
import { HttpKube } from "@berth/controllers/kube";
import {
  ensureRealPreset,
  offerSessionImages,
  REAL_PRESET,
  steerGpuSessionsToRealNode,
} from "../real/real-node-sessions.ts";
import { kubeConfigFrom } from "../testbed/kubeconfig.ts";
import { spawnManaged } from "../testbed/process.ts";
import type { Service } from "./service.ts";

export const IMAGES_READY = "session images in the catalog";

export const realSessionsService: Service = {
  name: "real-sessions",
  async start(ctx) {
    const node = ctx.fleet.realNodes[0];
    const pullHost = ctx.published.BERTH_REGISTRY_PULL_PREFIX;
    if (!node || !pullHost) return { stop: async () => {} };
    const mgmt = ctx.fleet.clusters.find((c) => c.kind === "management");
    if (!mgmt) throw new Error("the fleet has no management cluster");
    await steerGpuSessionsToRealNode(ctx.fleet.cluster(node.cluster));
    const kube = new HttpKube(kubeConfigFrom(mgmt.kubeconfig));
    await ensureRealPreset(kube).catch((e: unknown) => {
      kube.close();
      throw e;
    });
    // Built in a child process: a build blocks the process that runs it (cdk8s/src/image/sessions.ts).
    const logFile = join(ctx.dataDir, "session-images.log");
    ctx.log(
      `[real-sessions] JupyterLab, terminal and code editor images for ${node.name}: building in the background (a first build takes about 15 minutes; log in ${relative(process.cwd(), logFile)})`,
    );
    const build = spawnManaged({
      name: "session-images",
      command: process.execPath,
      args: [join(ctx.root, "cdk8s/src/image/sessions.ts"), "build"],
      logFile,
      cwd: ctx.root,
    });
    let stopped = false;
    const offered = (async () => {
      const code = await build.exited;
      if (stopped) return;
      if (code !== 0) throw new Error(`the build exited with ${code}: ${build.tail(1).trim()}`);
      const registry = new URL(ctx.published.BERTH_REGISTRY_URL ?? "").host;
      const images = await offerSessionImages(
        kube,
        KINDS.map((k) => buildSessionImage(k, { quiet: true })), // from the cache the build just filled
        registry,
        pullHost,
      );
      if (stopped) return;
      ctx.log(
        `[real-sessions] ${IMAGES_READY}: ${Object.values(images)
          .map((i) => i.name)
          .join(", ")}; with preset ${REAL_PRESET} on ${node.cluster} they run on ${node.name}`,
      );
    })().catch((e: unknown) => {
      if (!stopped)
        ctx.log(
          `[real-sessions] session images not offered (${e instanceof Error ? e.message : String(e)}; see ${relative(process.cwd(), logFile)}); the rest runs on`,
        );
    });
    return {
      endpoints: [{ name: "real sessions", url: `preset ${REAL_PRESET} on ${node.cluster}'s GPUs, on ${node.name}` }],
      stop: async () => {
        stopped = true;
        await build.stop();
        await offered;
        kube.close();
      },
    };
  },
};
