// Only verified images run: signatures in cosign's layout on two real OCI registries (Berth's, and one
// standing in for a public registry), the settings that require them, and the three places they are
// checked — a session's create, a catalog image's write, an import's copy — over HTTP with the real API,
// Postgres, the bed's management cluster and the worker's import loop.

import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HttpKube } from "@berth/controllers/kube";
import { loadCrds } from "@berth/crds/manifests";
import { type Fleet, kubeConfigFrom, type LocalRegistry, pushImage, startFleet, startRegistry } from "@berth/e2e";
import { ApiextensionsV1Api } from "@kubernetes/client-node";
import pino from "pino";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { installDefaultCatalog } from "../../bootstrap/catalog.ts";
import {
  anIdentityWorld,
  type IdentityTestApi,
  type IdentityWorld,
  startIdentityTestApi,
} from "../../domain/identity/identity.test-support.ts";
import { MANIFEST_TYPES, RegistryClient } from "../../domain/images/registry.ts";
import {
  PAYLOAD_TYPE,
  SIGNATURE_ANNOTATION,
  signatureTag,
  signImage,
  verifyImageSignature,
} from "../../domain/images/signatures.ts";
import { makeSessionsRuntime } from "../../domain/sessions/runtime.ts";
import { ImportLoop } from "../../worker/imports.ts";

const ecKey = () => generateKeyPairSync("ec", { namedCurve: "prime256v1" });
const pem = (k: KeyObject) => k.export({ type: "spki", format: "pem" }).toString();

let fleet: Fleet;
let kube: HttpKube;
let source: LocalRegistry;
let target: LocalRegistry;
let t: IdentityTestApi;
let w: IdentityWorld;
let loop: ImportLoop;
let dir: string;
const berthKey = ecKey();
const teamKey = ecKey();
const strangerKey = ecKey();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "berth-signing-"));
  const keyFile = join(dir, "berth.pem");
  writeFileSync(keyFile, berthKey.privateKey.export({ type: "pkcs8", format: "pem" }));
  [fleet, source, target] = await Promise.all([
    startFleet({ clusters: [{ name: "mgmt", kind: "management" }] }),
    startRegistry({ name: "public" }),
    startRegistry({ name: "berth" }),
  ]);
  const kc = kubeConfigFrom(fleet.cluster("mgmt").kubeconfig);
  const ext = kc.makeApiClient(ApiextensionsV1Api);
  for (const crd of loadCrds()) await ext.createCustomResourceDefinition({ body: crd as never });
  kube = new HttpKube(kc);
  await installDefaultCatalog(kube);
  t = await startIdentityTestApi({
    kubeConfig: kc,
    sessions: makeSessionsRuntime(kube),
    env: {
      BERTH_REGISTRY_URL: target.url,
      BERTH_REGISTRY_PULL_PREFIX: "registry.berth.test",
      BERTH_IMAGE_INTERNAL_REGISTRIES: new URL(source.url).host,
      BERTH_IMAGE_SIGNING_KEY_FILE: keyFile,
    },
  });
  w = await anIdentityWorld(t);
  loop = new ImportLoop({
    db: t.database.db,
    kube,
    config: t.deps.config.images as NonNullable<typeof t.deps.config.images>,
    log: pino({ level: "silent" }),
    attempts: 1,
    idleTimeoutMs: 1000,
    intervalMs: 60_000,
  });
}, 120_000);

afterAll(async () => {
  await loop?.stop();
  await t?.stop();
  kube?.close();
  await Promise.all([fleet?.stop(), source?.stop(), target?.stop()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const client = (reg: LocalRegistry) => new RegistryClient({ baseUrl: reg.url });
const sourceHost = () => new URL(source.url).host;
const settings = (json: unknown) =>
  t.request("PATCH", "/api/v1/system/settings", { token: w.superAdmin.token, json: { image_signatures: json } });

async function requireSignatures(keys: { name: string; public_key: string }[]) {
  const r = await settings({ required: true, keys });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}

beforeEach(async () => {
  const r = await settings({ required: false, keys: [] });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
});

describe("signatures in cosign's layout", () => {
  it("verify by the key that signed, keep earlier signatures when another key signs, and say why otherwise", async () => {
    const img = await pushImage(source.url, "lab/signed", "1");
    const reg = client(source);
    expect(
      await verifyImageSignature(reg, "lab/signed", img.digest, [{ name: "team", key: teamKey.publicKey }]),
    ).toEqual(expect.objectContaining({ ok: false, reason: "unsigned" }));
    await signImage(reg, "lab/signed", img.digest, `${sourceHost()}/lab/signed`, teamKey.privateKey);
    expect(
      await verifyImageSignature(reg, "lab/signed", img.digest, [{ name: "team", key: teamKey.publicKey }]),
    ).toEqual({ ok: true, key: "team" });
    expect(
      await verifyImageSignature(reg, "lab/signed", img.digest, [{ name: "other", key: strangerKey.publicKey }]),
    ).toEqual(expect.objectContaining({ ok: false, reason: "untrusted" }));
    // A second key's signature sits beside the first: both verify.
    await signImage(reg, "lab/signed", img.digest, `${sourceHost()}/lab/signed`, strangerKey.privateKey);
    expect(
      await verifyImageSignature(reg, "lab/signed", img.digest, [{ name: "team", key: teamKey.publicKey }]),
    ).toEqual({ ok: true, key: "team" });
    expect(
      await verifyImageSignature(reg, "lab/signed", img.digest, [{ name: "other", key: strangerKey.publicKey }]),
    ).toEqual({ ok: true, key: "other" });
  });

  it("refuse a signature that names another digest, moved beside an unsigned image", async () => {
    const signed = await pushImage(source.url, "lab/moved", "1", { layers: [Buffer.from("a")] });
    const other = await pushImage(source.url, "lab/moved", "2", { layers: [Buffer.from("b")] });
    const reg = client(source);
    await signImage(reg, "lab/moved", signed.digest, `${sourceHost()}/lab/moved`, teamKey.privateKey);
    const sig = await reg.getManifest("lab/moved", signatureTag(signed.digest));
    await reg.putManifest("lab/moved", signatureTag(other.digest), sig.mediaType, sig.bytes);
    expect(
      await verifyImageSignature(reg, "lab/moved", other.digest, [{ name: "team", key: teamKey.publicKey }]),
    ).toEqual(expect.objectContaining({ ok: false, reason: "invalid" }));
  });

  it("read junk as no signature: a manifest of odd layers and one whose payload is gone (never a 500)", async () => {
    const img = await pushImage(source.url, "lab/junk", "1", { layers: [Buffer.from("junk")] });
    const reg = client(source);
    const missing = `sha256:${"0".repeat(64)}`;
    await reg.putManifest(
      "lab/junk",
      signatureTag(img.digest),
      MANIFEST_TYPES.ociManifest,
      Buffer.from(
        JSON.stringify({
          schemaVersion: 2,
          mediaType: MANIFEST_TYPES.ociManifest,
          config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: missing, size: 2 },
          layers: [
            null,
            1,
            { mediaType: PAYLOAD_TYPE, digest: missing, size: 10, annotations: { [SIGNATURE_ANNOTATION]: "AAAA" } },
          ],
        }),
      ),
    );
    expect(await verifyImageSignature(reg, "lab/junk", img.digest, [{ name: "team", key: teamKey.publicKey }])).toEqual(
      expect.objectContaining({ ok: false, reason: "untrusted" }),
    );
  });
});

describe("the image_signatures settings", () => {
  it("refuse keys Berth cannot verify with, twice the same name, and anyone but a super_admin", async () => {
    const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey;
    for (const keys of [
      [{ name: "rsa", public_key: pem(rsa) }],
      [{ name: "junk", public_key: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n" }],
      [
        { name: "team", public_key: pem(teamKey.publicKey) },
        { name: "team", public_key: pem(strangerKey.publicKey) },
      ],
    ]) {
      const r = await settings({ required: true, keys });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.error.code).toBe("validation_failed");
      expect(JSON.stringify(r.body.error.details)).toContain("image_signatures");
    }
    for (const who of [w.adminA, w.memberA]) {
      const r = await t.request("PATCH", "/api/v1/system/settings", {
        token: who.token,
        json: { image_signatures: { required: true } },
      });
      expect(r.status).toBe(403);
    }
    const after = await t.request("GET", "/api/v1/system/settings", { token: w.superAdmin.token });
    expect(after.body.image_signatures).toEqual({ required: false, keys: [] });
  });

  it("Berth's public key is readable by any signed-in user and verifies what Berth signs", async () => {
    const r = await t.request("GET", "/api/v1/images/signing-key", { token: w.memberA.token });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual({ algorithm: "ecdsa-p256-sha256", public_key: pem(berthKey.publicKey), name: "berth" });
    expect((await t.request("GET", "/api/v1/images/signing-key")).status).toBe(401);
    const expired = await t.expiredTokenFor(w.memberA.id);
    const e = await t.request("GET", "/api/v1/images/signing-key", { token: expired });
    expect(e.status).toBe(401);
    expect(e.body.error.code).toBe("token_expired");
  });
});

describe("with signatures required", () => {
  it("a catalog image by tag, or by an unsigned digest, is refused; one signed by a listed key is added", async () => {
    const img = await pushImage(source.url, "lab/catalog", "1");
    await requireSignatures([{ name: "team", public_key: pem(teamKey.publicKey) }]);
    const post = (name: string, image: string) =>
      t.request("POST", "/api/v1/images", {
        token: w.superAdmin.token,
        json: { name, display_name: name, image, kind: "jupyterlab" },
      });
    const byTag = await post("by-tag", `${sourceHost()}/lab/catalog:1`);
    expect(byTag.status, JSON.stringify(byTag.body)).toBe(422);
    expect(byTag.body.error).toMatchObject({ code: "image_unsigned", details: { reason: "not_pinned" } });
    const unsigned = await post("unsigned", `${sourceHost()}/lab/catalog@${img.digest}`);
    expect(unsigned.status, JSON.stringify(unsigned.body)).toBe(422);
    expect(unsigned.body.error.details.reason).toBe("unsigned");
    await signImage(client(source), "lab/catalog", img.digest, `${sourceHost()}/lab/catalog`, strangerKey.privateKey);
    const untrusted = await post("untrusted", `${sourceHost()}/lab/catalog@${img.digest}`);
    expect(untrusted.body.error.details.reason, JSON.stringify(untrusted.body)).toBe("untrusted");
    expect(untrusted.body.error.message).toContain("team");
    await signImage(client(source), "lab/catalog", img.digest, `${sourceHost()}/lab/catalog`, teamKey.privateKey);
    const signed = await post("signed", `${sourceHost()}/lab/catalog@${img.digest}`);
    expect(signed.status, JSON.stringify(signed.body)).toBe(201);
    // Nothing of the refused ones was written.
    const list = await t.request("GET", "/api/v1/images?size=100", { token: w.superAdmin.token });
    expect(list.body.data.map((i: { name: string }) => i.name)).not.toContain("unsigned");
  });

  it("a session of a catalog image named by tag is refused, naming why; without the requirement it is not", async () => {
    await requireSignatures([]);
    const create = () =>
      t.request("POST", "/api/v1/sessions", {
        token: w.memberA.token,
        json: { offering: "h100", preset: "gpu-small", image: "jupyterlab", project_id: w.projectA.id },
      });
    const r = await create();
    expect(r.status, JSON.stringify(r.body)).toBe(422);
    expect(r.body.error).toMatchObject({ code: "image_unsigned", details: { reason: "not_pinned", field: "image" } });
    await settings({ required: false });
    const free = await create();
    // The checks after the signature's go on: this bed has no GPU cluster, which is the next refusal.
    expect(free.body.error?.code, JSON.stringify(free.body)).toBe("gpu_model_unavailable");
  });

  it("an unsigned import fails with `unsigned`; a signed one is copied and carries Berth's signature, so its sessions pass", async () => {
    const plain = await pushImage(source.url, "lab/plain", "1", { layers: [Buffer.from("plain")] });
    const trusted = await pushImage(source.url, "lab/trusted", "1", { layers: [Buffer.from("trusted")] });
    await signImage(client(source), "lab/trusted", trusted.digest, `${sourceHost()}/lab/trusted`, teamKey.privateKey);
    await requireSignatures([{ name: "team", public_key: pem(teamKey.publicKey) }]);

    const settle = async (id: string) => {
      for (let i = 0; i < 40; i++) {
        await loop.poll();
        await loop.idle();
        const r = await t.request("GET", `/api/v1/images/private/${id}`, { token: w.memberA.token });
        if (r.body.state !== "importing") return r.body;
        await new Promise((res) => setTimeout(res, 250));
      }
      throw new Error(`image ${id} still importing`);
    };
    const start = async (reference: string) => {
      const r = await t.request("POST", "/api/v1/images/import", { token: w.memberA.token, json: { reference } });
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      return settle(r.body.id);
    };

    const refused = await start(`${sourceHost()}/lab/plain:1`);
    expect(refused.state).toBe("failed");
    expect(refused.failure).toMatchObject({ code: "unsigned" });
    expect(refused.failure.reason).toContain("not signed");
    expect((await fetch(`${target.url}/v2/${w.orgA.id}/${w.memberA.id}/plain/manifests/${plain.digest}`)).status).toBe(
      404,
    );

    const copied = await start(`${sourceHost()}/lab/trusted:1`);
    expect(copied.state, JSON.stringify(copied.failure)).toBe("ready");
    const repo = `${w.orgA.id}/${w.memberA.id}/trusted`;
    expect(
      await verifyImageSignature(client(target), repo, copied.digest, [{ name: "berth", key: berthKey.publicKey }]),
    ).toEqual({ ok: true, key: "berth" });
    // Berth's own key is trusted without being listed: the member's session passes the check.
    const r = await t.request("POST", "/api/v1/sessions", {
      token: w.memberA.token,
      json: { offering: "h100", preset: "gpu-small", image: copied.id, project_id: w.projectA.id },
    });
    expect(r.body.error?.code, JSON.stringify(r.body)).toBe("gpu_model_unavailable");
  });
});
