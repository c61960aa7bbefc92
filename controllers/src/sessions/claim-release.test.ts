// The release race (docs/dev/storage.md, "Claims where the session lands" 4): a session that comes while
// its volume's idle claim is being released waits for the release, then lands with a fresh claim; it
// never lands on a claim being deleted, and the volume never reads unbound while the old claim is there.

import { sessionPath, volumeClaimName } from "@berth/crds";
import { afterEach, describe, expect, it } from "vitest";
import type { KubeApi } from "../kube/client.ts";
import { aFleet, CLUSTER, stopFleets, until } from "./fleet.test-support.ts";
import { aSession } from "./session-builder.test-support.ts";

afterEach(stopFleets);

const VOL = "vol-aaaaaaaaaaaaaaaaaaaa";
const CLAIM = volumeClaimName("vol_aaaaaaaaaaaaaaaaaaaa");
const PVC_PATH = `/api/v1/namespaces/berth-sessions/persistentvolumeclaims/${CLAIM}`;

describe("a session that comes while its volume's claim is released", () => {
  it("waits for the release to finish, then lands with a claim made again, and the volume never reads unbound meanwhile", async () => {
    const f = aFleet(0, 1, { pollMs: 50, claimIdleMs: 100 });
    f.mgmt.put("volumes", {
      apiVersion: "berth.dev/v1alpha1",
      kind: "Volume",
      metadata: { name: VOL, namespace: "org-acme" },
      spec: {
        owner: { kind: "user", id: "usr_aaaaaaaaaaaaaaaaaaaa" },
        organization: "org_aaaaaaaaaaaaaaaaaaaa",
        sizeGb: 10,
        storageClass: "berth-pool",
        shares: [],
        locked: false,
      },
      status: { boundCluster: CLUSTER, claimName: CLAIM, lastUsedAt: "2026-11-26T06:00:00Z" },
    } as never);
    f.gpu.put("persistentvolumeclaims", {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name: CLAIM, namespace: "berth-sessions" },
    } as never);
    // The claim's delete is held until the test lets it go; each step is logged in order.
    const log: string[] = [];
    let letGo = () => {};
    const held = new Promise<void>((r) => {
      letGo = r;
    });
    const request = f.gpu.request.bind(f.gpu) as KubeApi["request"];
    (f.gpu as { request: KubeApi["request"] }).request = async (method, path, opts) => {
      if (method === "DELETE" && path === PVC_PATH) {
        log.push("claim delete asked");
        await held;
        const res = await request(method, path, opts);
        log.push("claim gone");
        return res as never;
      }
      const res = await request(method, path, opts);
      if (path.includes("/sessionmirrors/") && (res.status === 201 || res.status === 200) && method !== "GET")
        log.push("mirror written");
      return res as never;
    };
    const volume = () => f.mgmt.list("volumes")[0] as unknown as { status?: Record<string, unknown> };

    await f.controller.start();
    await until("the release to reach the claim", () => log.includes("claim delete asked"));
    expect(volume().status?.releasingSince).toEqual(expect.any(String));

    // A session that mounts the volume comes now, between the idle pass's look and the claim's delete.
    const s = aSession("ses-00000000000000000001").build();
    s.spec.volumes = [{ volume: VOL, readOnly: false }];
    delete s.status;
    const created = await f.mgmt.request("POST", sessionPath("org-acme"), { body: s });
    expect(created.status).toBe(201);
    // The session is placed and its mirror's write was tried, then held back (twice: the retry a second
    // later is held too), all while the claim's delete is pending.
    await until("the mirror's write held back twice", () => f.controller.counts.releaseWaits >= 2);
    // No mirror while the claim is being deleted, and the volume still says where its claim is.
    expect(log).toEqual(["claim delete asked"]);
    expect(volume().status?.boundCluster).toBe(CLUSTER);

    letGo();
    await until("the mirror", () => log.includes("mirror written"));
    expect(log.slice(0, 3)).toEqual(["claim delete asked", "claim gone", "mirror written"]);
    // Recorded again on the cluster it landed on (the operator there makes the claim again).
    await until("the volume bound again", () => volume().status?.boundCluster === CLUSTER);
    expect(volume().status?.releasingSince ?? null).toBeNull();
    expect(volume().status?.claimName).toBe(CLAIM);
  });
});
