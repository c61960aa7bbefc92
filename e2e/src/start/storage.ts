// `npm start`'s storage: the default pool "shared" every GPU cluster mounts (what a real install has on each:
// a CSIDriver, the StorageClass berth-shared, a capacity report, and here a small provisioner standing in
// for the driver), and the demo researcher's `home` volume on it. Where the real node runs, a real CSI driver
// on it (testbed/csi-hostpath.ts) serves the class berth-hostpath and the pool "real-node" on its cluster.
import { join } from "node:path";
import { ensureDefaultPool, ensureHomeVolume, ensurePool, type RunningApi } from "@berth/api";
import { type BedProvisioner, installBedStorage, startProvisioner } from "../storage/bed-storage.ts";
import { HOSTPATH_STORAGE_CLASS, type RunningCsiHostpath, startCsiHostpath } from "../testbed/csi-hostpath.ts";
import type { Service } from "./service.ts";

/** The local fleet's shared pool: its storage class on every GPU cluster, its server "in" the first. */
export const LOCAL_STORAGE_CLASS = "berth-shared";
const LOCAL_POOL_GIB = 500;

/** After the clusters are registered; `deps` is the API's (its storage domain). */
export function storageService(deps: () => RunningApi["deps"] | undefined): Service {
  return {
    name: "storage",
    async start(ctx) {
      const api = deps();
      if (!api) throw new Error("storage needs the API");
      const regs = JSON.parse(ctx.published.BERTH_LOCAL_CLUSTERS ?? "[]") as { cluster: string; clusterId: string }[];
      const gpu = ctx.fleet.clusters.filter((c) => c.kind === "gpu");
      const provisioners: BedProvisioner[] = [];
      const drivers: RunningCsiHostpath[] = [];
      const stop = async () => {
        for (const p of provisioners) await p.stop().catch(() => {});
        for (const d of drivers) await d.stop().catch(() => {});
      };
      try {
        for (const c of gpu) {
          await installBedStorage(c, { storageClass: LOCAL_STORAGE_CLASS, capacityGb: LOCAL_POOL_GIB });
          provisioners.push(startProvisioner(c, { storageClass: LOCAL_STORAGE_CLASS, intervalMs: 500 }));
        }
        // A real node's pods mount for real: a real CSI driver on it provisions its own class there and
        // publishes its capacity. Its volumes live on that node (as do the pods meant for it, which
        // tolerate its taint), so its pool is its cluster's alone.
        for (const node of ctx.fleet.realNodes) {
          const c = ctx.fleet.cluster(node.cluster);
          const reg = regs.find((r) => r.cluster === node.cluster);
          drivers.push(
            await startCsiHostpath({
              cluster: c,
              nodeName: node.name,
              kubeletRootDir: node.layout.kubeletRoot,
              dir: join(node.layout.base, "csi-hostpath"),
              capacityGib: LOCAL_POOL_GIB,
              log: (l) => ctx.log(`[storage] ${l}`),
            }),
          );
          if (reg)
            await ensurePool(api, {
              name: "real-node",
              cluster: reg.clusterId,
              storageClass: HOSTPATH_STORAGE_CLASS,
              displayName: `Real node ${node.name} (hostpath CSI)`,
              sharing: "selected",
              clusters: [reg.clusterId],
              default: false,
            });
        }
      } catch (err) {
        await stop();
        throw err;
      }
      const first = regs[0];
      if (first)
        await ensureDefaultPool(api, {
          name: "shared",
          cluster: first.clusterId,
          storageClass: LOCAL_STORAGE_CLASS,
          displayName: "Shared pool",
        });
      if (first && process.env.BERTH_DEMO !== "0") {
        const home = await ensureHomeVolume(api, { email: "researcher@berth.local" });
        if (home.created) ctx.log(`[storage] the researcher's home volume: ${home.volumeId} (20 GB on pool shared)`);
      }
      return {
        endpoints: [
          { name: "storage pool", url: `shared (class ${LOCAL_STORAGE_CLASS} on ${gpu.length} clusters)` },
          ...ctx.fleet.realNodes.map((n) => ({
            name: "storage pool",
            url: `real-node (class ${HOSTPATH_STORAGE_CLASS}, the hostpath CSI driver on ${n.name})`,
          })),
        ],
        stop,
      };
    },
  };
}
