// Private images end to end: Postgres, the bed's management cluster (Image resources), two real OCI
// registries (Berth's, and one standing in for a public registry behind an anonymous token flow), the
// API over HTTP and the worker's import loop.

import { HttpKube } from "@berth/controllers/kube";
import { loadCrds } from "@berth/crds/manifests";
import {
  type Fleet,
  kubeConfigFrom,
  type LocalRegistry,
  pushImage,
  pushIndex,
  startFleet,
  startRegistry,
  startTokenGate,
  type TokenGate,
  tarLayer,
} from "@berth/e2e";
import { ApiextensionsV1Api, type KubeConfig } from "@kubernetes/client-node";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installDefaultCatalog } from "../../bootstrap/catalog.ts";
import {
  anIdentityWorld,
  type IdentityTestApi,
  type IdentityWorld,
  startIdentityTestApi,
  type TestUser,
} from "../../domain/identity/identity.test-support.ts";
import { ImportLoop } from "../../worker/imports.ts";

let fleet: Fleet;
let kc: KubeConfig;
let kube: HttpKube;
let source: LocalRegistry;
let target: LocalRegistry;
let gate: TokenGate;
let t: IdentityTestApi;
let w: IdentityWorld;
let loop: ImportLoop;
const MAX_BYTES = 256 * 1024;

beforeAll(async () => {
  [fleet, source, target] = await Promise.all([
    startFleet({ clusters: [{ name: "mgmt", kind: "management" }] }),
    startRegistry({ name: "public" }),
    startRegistry({ name: "berth" }),
  ]);
  gate = await startTokenGate(source.url);
  kc = kubeConfigFrom(fleet.cluster("mgmt").kubeconfig);
  const ext = kc.makeApiClient(ApiextensionsV1Api);
  for (const crd of loadCrds()) await ext.createCustomResourceDefinition({ body: crd as never });
  kube = new HttpKube(kc);
  await installDefaultCatalog(kube);
  t = await startIdentityTestApi({
    kubeConfig: kc,
    env: {
      BERTH_REGISTRY_URL: target.url,
      BERTH_REGISTRY_PULL_PREFIX: "registry.berth.test",
      BERTH_IMAGE_INTERNAL_REGISTRIES: gate.host,
      BERTH_IMAGE_MAX_BYTES: String(MAX_BYTES),
    },
  });
  w = await anIdentityWorld(t);
  loop = new ImportLoop({
    db: t.database.db,
    kube,
    config: t.deps.config.images as NonNullable<typeof t.deps.config.images>,
    log: pino({ level: "silent" }),
    attempts: 2,
    idleTimeoutMs: 1000,
    intervalMs: 60_000,
  });
}, 120_000);

afterAll(async () => {
  await loop?.stop();
  await t?.stop();
  kube?.close();
  await gate?.stop();
  await Promise.all([fleet?.stop(), source?.stop(), target?.stop()]);
});

async function importImage(user: TestUser, body: Record<string, unknown>) {
  const r = await t.request("POST", "/api/v1/images/import", { token: user.token, json: body });
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  expect(r.body.state).toBe("importing");
  return r.body as { id: string };
}

/** The worker's passes until the image leaves `importing` (retries wait out their pause). */
async function settle(user: TestUser, id: string) {
  for (let i = 0; i < 40; i++) {
    await loop.poll();
    await loop.idle();
    const r = await t.request("GET", `/api/v1/images/private/${id}`, { token: user.token });
    if (r.body.state !== "importing") return r.body;
    await new Promise((res) => setTimeout(res, 250));
  }
  throw new Error(`image ${id} still importing`);
}

/** The owner's notifications about one image's import, as the bell reads them. */
async function bellFor(user: TestUser, imageId: string) {
  const r = await t.request("GET", "/api/v1/notifications?kind=image_import.finished", { token: user.token });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return (r.body.data as { title: string; body: string; data: { image_id: string; state: string } }[]).filter(
    (n) => n.data.image_id === imageId,
  );
}

const manifestIn = async (reg: LocalRegistry, repo: string, ref: string) =>
  fetch(`${reg.url}/v2/${repo}/manifests/${ref}`, {
    headers: {
      Accept: "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json",
    },
  });

describe("importing from a public registry", () => {
  it("copies the linux/amd64 image of an OCI index through the anonymous token flow, by digest, as a private image", async () => {
    const idx = await pushIndex(source.url, "lab/multi", "1", ["linux/arm64", "linux/amd64"]);
    const amd64 = idx.children.get("linux/amd64");
    const tokensBefore = gate.tokensIssued;
    const { id } = await importImage(w.memberA, { reference: `${gate.host}/lab/multi:1`, kind: "code-server" });
    const img = await settle(w.memberA, id);
    expect(img.state, JSON.stringify(img.failure)).toBe("ready");
    expect(gate.tokensIssued).toBeGreaterThan(tokensBefore);
    expect(img.digest).toBe(amd64?.digest);
    expect(img.size_bytes).toBe(amd64?.size);
    expect(img.progress).toEqual({ bytes_copied: amd64?.size, bytes_total: amd64?.size });
    const repo = `${w.orgA.id}/${w.memberA.id}/multi`;
    expect(img.image).toBe(`registry.berth.test/${repo}@${amd64?.digest}`);
    // Berth's registry holds the manifest under that digest, and the tag.
    expect((await manifestIn(target, repo, amd64?.digest as string)).status).toBe(200);
    expect((await manifestIn(target, repo, "1")).headers.get("docker-content-digest")).toBe(amd64?.digest);
    // The catalog lists it as the owner's private image; another member does not see it.
    const mine = await t.request("GET", "/api/v1/images?size=50", { token: w.memberA.token });
    expect(mine.status, JSON.stringify(mine.body)).toBe(200);
    const entry = mine.body.data.find((i: { name: string }) => i.name === id);
    expect(entry).toMatchObject({ visibility: "private", owner: w.memberA.id, kind: "code-server", image: img.image });
    const theirs = await t.request("GET", "/api/v1/images?size=50", { token: w.memberB.token });
    expect(theirs.body.data.map((i: { name: string }) => i.name)).not.toContain(id);
    // Its owner's bell says so, once; another member's does not.
    expect(await bellFor(w.memberA, id)).toEqual([
      expect.objectContaining({ title: "Image imported", data: expect.objectContaining({ state: "ready" }) }),
    ]);
    expect(await bellFor(w.memberB, id)).toEqual([]);
  });

  it("picks linux/amd64 from a Docker manifest list", async () => {
    const list = await pushIndex(source.url, "lab/dockerlist", "2", ["linux/amd64", "linux/arm/v7"], { docker: true });
    const { id } = await importImage(w.memberA, { reference: `${gate.host}/lab/dockerlist:2` });
    const img = await settle(w.memberA, id);
    expect(img.state).toBe("ready");
    expect(img.digest).toBe(list.children.get("linux/amd64")?.digest);
  });

  it("copies only the blobs Berth's registry lacks", async () => {
    const shared = tarLayer([{ name: "big.bin", content: Buffer.alloc(64 * 1024, 7) }]);
    const built = await pushImage(source.url, "lab/reuse", "a", { layers: [shared] });
    const first = await settle(
      w.memberA,
      (await importImage(w.memberA, { reference: `${gate.host}/lab/reuse:a`, tag: "a" })).id,
    );
    expect(first.state).toBe("ready");
    const layer = built.blobs[1]?.digest as string;
    const gets = gate.blobGets.get(layer);
    const again = await settle(
      w.memberA,
      (await importImage(w.memberA, { reference: `${gate.host}/lab/reuse:a`, tag: "b" })).id,
    );
    expect(again.state).toBe("ready");
    expect(gate.blobGets.get(layer)).toBe(gets);
  });

  it("fails with no_matching_platform when the index has no linux/amd64, and frees the slot", async () => {
    await pushIndex(source.url, "lab/armonly", "1", ["linux/arm64"]);
    const before = (await t.request("GET", "/api/v1/images/private", { token: w.orgMemberA.token })).body.count;
    const { id } = await importImage(w.orgMemberA, { reference: `${gate.host}/lab/armonly:1` });
    expect((await t.request("GET", "/api/v1/images/private", { token: w.orgMemberA.token })).body.count).toBe(
      before + 1,
    );
    const img = await settle(w.orgMemberA, id);
    expect(img.state).toBe("failed");
    expect(img.failure.code).toBe("no_matching_platform");
    expect(img.failure.reason).toContain("linux/arm64");
    const [bell, ...more] = await bellFor(w.orgMemberA, id);
    expect(more).toEqual([]);
    expect(bell).toMatchObject({ title: "Image import failed", data: { state: "failed" } });
    expect(bell?.body).toContain("linux/arm64");
    expect((await t.request("GET", "/api/v1/images/private", { token: w.orgMemberA.token })).body.count).toBe(before);
  });

  it("fails with not_found, unauthorized and too_large in words a person understands", async () => {
    const missing = await settle(
      w.orgMemberA,
      (await importImage(w.orgMemberA, { reference: `${gate.host}/lab/nothing:1` })).id,
    );
    expect(missing.failure).toMatchObject({ code: "not_found" });
    expect(missing.failure.reason).toContain("lab/nothing:1 was not found");

    await pushImage(source.url, "lab/secret", "1");
    gate.privateRepositories.add("lab/secret");
    const secret = await settle(
      w.orgMemberA,
      (await importImage(w.orgMemberA, { reference: `${gate.host}/lab/secret:1` })).id,
    );
    expect(secret.failure).toMatchObject({ code: "unauthorized" });

    const huge = await pushImage(source.url, "lab/huge", "1", { layers: [Buffer.alloc(MAX_BYTES + 1, 1)] });
    const big = await settle(
      w.orgMemberA,
      (await importImage(w.orgMemberA, { reference: `${gate.host}/lab/huge:1` })).id,
    );
    expect(big.failure.code).toBe("too_large");
    expect(big.failure.reason).toMatch(/more than the 256\.0 KiB/);
    // Refused before copying: the layer was never asked for.
    expect(gate.blobGets.get(huge.blobs[1]?.digest as string) ?? 0).toBe(0);
  });

  it("refuses a blob whose bytes do not match its digest, and keeps nothing of it", async () => {
    const built = await pushImage(source.url, "lab/corrupt", "1", {
      layers: [tarLayer([{ name: "x", content: "will be corrupted" }])],
    });
    const layer = built.blobs[1]?.digest as string;
    gate.corrupt.add(layer);
    const img = await settle(
      w.orgMemberA,
      (await importImage(w.orgMemberA, { reference: `${gate.host}/lab/corrupt:1` })).id,
    );
    expect(img.failure.code).toBe("digest_mismatch");
    expect(
      (await fetch(`${target.url}/v2/${w.orgA.id}/${w.orgMemberA.id}/corrupt/blobs/${layer}`, { method: "HEAD" }))
        .status,
    ).toBe(404);
    expect((await manifestIn(target, `${w.orgA.id}/${w.orgMemberA.id}/corrupt`, "1")).status).toBe(404);
  });

  it("resumes after the registry stops answering mid-copy, skipping what arrived; or fails cleanly with nothing visible", async () => {
    const built = await pushImage(source.url, "lab/stall", "1", {
      layers: [
        tarLayer([{ name: "a", content: Buffer.alloc(20_000, 3) }]),
        tarLayer([{ name: "b", content: Buffer.alloc(30_000, 4) }]),
      ],
    });
    const stalled = built.blobs[2]?.digest as string;
    gate.stall.add(stalled);
    const { id } = await importImage(w.orgMemberA, { reference: `${gate.host}/lab/stall:1` });
    await loop.poll();
    await loop.idle();
    let r = await t.request("GET", `/api/v1/images/private/${id}`, { token: w.orgMemberA.token });
    expect(r.body.state).toBe("importing"); // interrupted, waiting for its next attempt
    gate.stall.delete(stalled);
    const config = built.blobs[0]?.digest as string;
    const configGets = gate.blobGets.get(config);
    const img = await settle(w.orgMemberA, id);
    expect(img.state).toBe("ready");
    expect(gate.blobGets.get(config)).toBe(configGets); // copied the first time, skipped on resuming

    const other = await pushImage(source.url, "lab/stall2", "1", {
      layers: [tarLayer([{ name: "c", content: Buffer.alloc(25_000, 5) }])],
    });
    gate.stall.add(other.blobs[1]?.digest as string);
    r = {
      body: await settle(
        w.orgMemberA,
        (await importImage(w.orgMemberA, { reference: `${gate.host}/lab/stall2:1` })).id,
      ),
    } as never;
    expect(r.body.failure.code).toBe("unreachable");
    expect(r.body.failure.reason).toContain("stopped sending");
    expect((await manifestIn(target, `${w.orgA.id}/${w.orgMemberA.id}/stall2`, "1")).status).toBe(404);
  });

  it("puts progress and the outcome on the owner's event stream", async () => {
    const rows = (await t.database
      .db("session_events")
      .where({ type: "image.updated", owner_id: w.memberA.id })
      .orderBy("seq")) as { payload: { image: { state: string; bytes_total: string | null } } }[];
    expect(rows.map((r) => r.payload.image.state)).toContain("importing");
    expect(rows.map((r) => r.payload.image.state)).toContain("ready");
    const ac = new AbortController();
    const res = await fetch(`${t.api.url}/api/v1/sessions/events`, {
      headers: { Authorization: `Bearer ${w.memberA.token}`, "Last-Event-ID": "0" },
      signal: ac.signal,
    });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = "";
    while (!text.includes('"state":"ready"')) text += new TextDecoder().decode((await reader.read()).value);
    ac.abort();
    expect(text).toContain("event: image.updated");
    expect(text).toContain('"progress":{"bytes_copied"');
    const other = new AbortController();
    const theirs = await fetch(`${t.api.url}/api/v1/sessions/events`, {
      headers: { Authorization: `Bearer ${w.memberB.token}`, "Last-Event-ID": "0" },
      signal: other.signal,
    });
    const r2 = (theirs.body as ReadableStream<Uint8Array>).getReader();
    let seen = "";
    while (!seen.includes("event: heartbeat")) seen += new TextDecoder().decode((await r2.read()).value);
    other.abort();
    expect(seen).not.toContain("image.updated");
  });
});

describe("at most 20 private images per member", () => {
  it("accepts exactly 20 of 25 parallel imports; the refusal names the count and the limit", async () => {
    const user = await t.aUser();
    await t.member(user, w.orgB.id, null, "member");
    const answers = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        t.request("POST", "/api/v1/images/import", {
          token: user.token,
          json: { reference: `${gate.host}/lab/multi:1`, tag: `t${i}` },
        }),
      ),
    );
    expect(answers.filter((a) => a.status === 202)).toHaveLength(20);
    const refused = answers.filter((a) => a.status !== 202);
    expect(refused).toHaveLength(5);
    for (const r of refused) {
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe("quota_exceeded");
      expect(r.body.error.details).toMatchObject({ count: 20, limit: 20 });
    }
    // Deleting one (an import in flight) frees its slot.
    const one = answers.find((a) => a.status === 202)?.body.id;
    expect((await t.request("DELETE", `/api/v1/images/private/${one}`, { token: user.token })).status).toBe(204);
    const next = await t.request("POST", "/api/v1/images/import", {
      token: user.token,
      json: { reference: `${gate.host}/lab/multi:1` },
    });
    expect(next.status).toBe(202);
    await t.database.db("private_images").where({ owner_id: user.id }).delete();
  });
});

describe("deleting a private image", () => {
  it("is refused while a session uses it, then removes the catalog entry and frees the slot", async () => {
    await pushImage(source.url, "lab/del", "1");
    const img = await settle(w.memberA, (await importImage(w.memberA, { reference: `${gate.host}/lab/del:1` })).id);
    expect(img.state).toBe("ready");
    await t.database.db("sessions").insert({
      id: "ses_imagedeltest0000001",
      cr_name: "ses-imagedeltest0000001",
      namespace: "org-a",
      owner_id: w.memberA.id,
      organization_id: w.orgA.id,
      offering: "h100",
      preset: "gpu-small",
      image: img.id,
      gpu_model: "H100",
      gpu_count: 1,
      hourly_credit_rate: "1",
      phase: "Running",
    });
    const refused = await t.request("DELETE", `/api/v1/images/private/${img.id}`, { token: w.memberA.token });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("image_in_use");
    expect(refused.body.error.details.sessions).toEqual(["ses_imagedeltest0000001"]);
    await t.database.db("sessions").where({ id: "ses_imagedeltest0000001" }).update({ phase: "Terminated" });
    expect((await t.request("DELETE", `/api/v1/images/private/${img.id}`, { token: w.memberA.token })).status).toBe(
      204,
    );
    expect((await t.request("GET", `/api/v1/images/private/${img.id}`, { token: w.memberA.token })).status).toBe(404);
    expect((await t.request("GET", `/api/v1/images/${img.id}`, { token: w.memberA.token })).status).toBe(404);
  });

  it("answers 404 to another member, 401 without or with an expired token", async () => {
    const img = await importImage(w.memberA, { reference: `${gate.host}/lab/multi:1`, tag: "sec" });
    for (const u of [w.memberB, w.adminA, w.outsider]) {
      expect((await t.request("GET", `/api/v1/images/private/${img.id}`, { token: u.token })).status).toBe(404);
      expect((await t.request("DELETE", `/api/v1/images/private/${img.id}`, { token: u.token })).status).toBe(404);
    }
    expect((await t.request("GET", `/api/v1/images/private/${img.id}`)).status).toBe(401);
    const expired = await t.request("DELETE", `/api/v1/images/private/${img.id}`, {
      token: await t.expiredTokenFor(w.memberA.id),
    });
    expect(expired.body.error.code).toBe("token_expired");
    expect(
      (await t.request("GET", `/api/v1/images/private?owner=${w.memberA.id}`, { token: w.memberB.token })).status,
    ).toBe(403);
    const asAdmin = await t.request("GET", `/api/v1/images/private?owner=${w.memberA.id}`, {
      token: w.superAdmin.token,
    });
    expect(asAdmin.body.data.map((i: { id: string }) => i.id)).toContain(img.id);
    expect(
      (await t.request("GET", "/api/v1/images/private/not-an-id", { token: w.memberA.token })).body.error.code,
    ).toBe("validation_failed");
    expect((await t.request("DELETE", `/api/v1/images/private/${img.id}`, { token: w.superAdmin.token })).status).toBe(
      204,
    );
  });
});

describe("bad input", () => {
  const cases: [string, Record<string, unknown>, string, string][] = [
    ["an empty reference", { reference: " " }, "image_reference_invalid", "syntax"],
    ["upper case in a repository", { reference: "ghcr.io/Org/App:1" }, "image_reference_invalid", "syntax"],
    ["spaces", { reference: "python 3" }, "image_reference_invalid", "syntax"],
    ["a bad digest", { reference: "python@sha256:xyz" }, "image_reference_invalid", "syntax"],
    [
      "credentials before the host",
      { reference: "me:secret@ghcr.io/org/app:1" },
      "image_reference_invalid",
      "credentials",
    ],
    [
      "credentials in a URL",
      { reference: "https://me:secret@ghcr.io/org/app:1" },
      "image_reference_invalid",
      "credentials",
    ],
    ["a scheme", { reference: "https://ghcr.io/org/app:1" }, "image_reference_invalid", "syntax"],
    [
      "a name outside the OCI grammar",
      { reference: "python:3", name: "My_Image!" },
      "image_reference_invalid",
      "syntax",
    ],
    ["a tag outside the OCI grammar", { reference: "python:3", tag: "-bad" }, "image_reference_invalid", "syntax"],
  ];
  for (const [what, body, code, reason] of cases)
    it(`answers 400 ${code} (${reason}) to ${what}, and creates nothing`, async () => {
      const before = await t.database.db("private_images").where({ owner_id: w.memberB.id }).count({ n: "*" }).first();
      const r = await t.request("POST", "/api/v1/images/import", { token: w.memberB.token, json: body });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.error.code).toBe(code);
      expect(r.body.error.details.reason).toBe(reason);
      expect(r.body.error.message).not.toContain("secret");
      const after = await t.database.db("private_images").where({ owner_id: w.memberB.id }).count({ n: "*" }).first();
      expect(after).toEqual(before);
    });

  it("answers 422 image_source_forbidden to a registry at an internal address nobody trusted", async () => {
    const r = await t.request("POST", "/api/v1/images/import", {
      token: w.memberB.token,
      json: { reference: "10.1.2.3:5000/x/y:1" },
    });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe("image_source_forbidden");
    expect(r.body.error.details.registry).toBe("10.1.2.3:5000");
  });

  it("answers 400 validation_failed without a reference", async () => {
    const r = await t.request("POST", "/api/v1/images/import", { token: w.memberB.token, json: {} });
    expect(r.body.error.code).toBe("validation_failed");
  });

  it("asks a member of several organizations to name one", async () => {
    const r = await t.request("POST", "/api/v1/images/import", {
      token: w.superAdmin.token,
      json: { reference: "python:3" },
    });
    expect(r.status).toBe(400);
    expect(r.body.error.details.issues[0].path).toEqual(["body", "organization_id"]);
  });
});
