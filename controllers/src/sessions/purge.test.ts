// Which PersistentVolumes a purge hands back to their driver: those whose handle is the volume's data path
// (a driver given the path) and those bound to the volume's claim (a driver that names a volume after its
// claim, as the bed's hostpath driver does), never another volume's. Pure unit: the clusters are fakes.
import type { Volume } from "@berth/crds";
import { describe, expect, it } from "vitest";
import type { KubeApi } from "../kube/client.ts";
import { ClaimsPass, type ClaimsPassDeps } from "./claims-pass.ts";

const ID = "aaaaaaaaaaaaaaaaaaaa";
const OTHER = "bbbbbbbbbbbbbbbbbbbb";

function fakeKube(pvs: unknown[], calls: string[]): KubeApi {
  return {
    server: "https://fake",
    async request(method: string, path: string) {
      calls.push(`${method} ${path}`);
      return { status: 200, body: {} } as never;
    },
    async json() {
      return { items: pvs } as never;
    },
    watch: async () => {},
  } as KubeApi;
}

describe("purgeVolume", () => {
  it("hands back the PVs named by the data path or bound to the volume's claim, and no other", async () => {
    const calls: string[] = [];
    const pvs = [
      { metadata: { name: "by-path" }, spec: { csi: { volumeHandle: `berth/volumes/vol-${ID}` } } },
      {
        metadata: { name: "by-claim" },
        spec: { csi: { volumeHandle: `berth-sessions/berth-vol-${ID}` }, claimRef: { name: `berth-vol-${ID}` } },
      },
      {
        metadata: { name: "already" },
        spec: { claimRef: { name: `berth-vol-${ID}` }, persistentVolumeReclaimPolicy: "Delete" },
      },
      {
        metadata: { name: "another" },
        spec: { csi: { volumeHandle: `berth-sessions/berth-vol-${OTHER}` }, claimRef: { name: `berth-vol-${OTHER}` } },
      },
    ];
    const gpu = fakeKube(pvs, calls);
    const management = fakeKube([], calls);
    const d = new ClaimsPass({
      management,
      clients: { client: async () => gpu },
    } as unknown as ClaimsPassDeps);
    const vol = { metadata: { name: `vol-${ID}`, namespace: "org-a" } } as Volume;
    expect(await d.purgeVolume(vol, ["clu_a"])).toBe(2);
    expect(calls).toEqual([
      "PATCH /api/v1/persistentvolumes/by-path",
      "PATCH /api/v1/persistentvolumes/by-claim",
      expect.stringMatching(new RegExp(`^DELETE .*/namespaces/org-a/volumes/vol-${ID}$`)),
    ]);
  });
});
