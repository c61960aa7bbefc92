// The CSI snapshot API's CRDs (VolumeSnapshot, VolumeSnapshotContent, VolumeSnapshotClass) for a GPU
// cluster of the bed, read from the upstream client module in the Go module cache (downloaded through the
// Go module proxy when absent), as the bed builds its binaries from modules: nothing upstream is copied
// into this repository. They make the API real (validation, status subresource, deletion); what moves a
// VolumeSnapshot to readyToUse is a snapshot controller and the driver's snapshotter, which run beside the
// bed's hostpath driver (../testbed/csi-hostpath.ts) at the same release (docs/dev/storage.md, "Snapshots").
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { KubeHttp } from "../testbed/kube.ts";
import type { Cluster } from "../testbed/types.ts";

export const SNAPSHOT_CLIENT_MODULE = "github.com/kubernetes-csi/external-snapshotter/client/v8@v8.7.0";
const FILES = [
  "snapshot.storage.k8s.io_volumesnapshotclasses.yaml",
  "snapshot.storage.k8s.io_volumesnapshotcontents.yaml",
  "snapshot.storage.k8s.io_volumesnapshots.yaml",
];

/** The three CRD documents, parsed. */
export function snapshotCrds(): Record<string, unknown>[] {
  const out = execFileSync("go", ["mod", "download", "-json", SNAPSHOT_CLIENT_MODULE], {
    cwd: tmpdir(), // outside any module: the version above is the only one asked for
    env: { ...process.env, GOFLAGS: "-mod=mod", GOTOOLCHAIN: "local" },
    stdio: ["ignore", "pipe", "inherit"],
  }).toString();
  const dir = (JSON.parse(out) as { Dir?: string }).Dir;
  if (!dir) throw new Error(`go mod download ${SNAPSHOT_CLIENT_MODULE} printed no Dir`);
  return FILES.map((f) => parse(readFileSync(join(dir, "config", "crd", f), "utf8")) as Record<string, unknown>);
}

/** Installs them on the cluster and waits (up to `timeoutMs`) until VolumeSnapshots are served. */
export async function installSnapshotCrds(c: Cluster, timeoutMs = 30_000): Promise<void> {
  const k = new KubeHttp({ server: c.server, caPem: c.caPem, token: c.adminToken });
  try {
    for (const crd of snapshotCrds()) await k.ensure("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const r = await k.raw("GET", "/apis/snapshot.storage.k8s.io/v1/volumesnapshots");
      if (r.status === 200) return;
      if (Date.now() > deadline) throw new Error(`VolumeSnapshots not served after ${timeoutMs} ms: ${r.status}`);
      await new Promise((res) => setTimeout(res, 100));
    }
  } finally {
    k.close();
  }
}
