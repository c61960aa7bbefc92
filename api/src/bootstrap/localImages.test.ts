// The local session images in the catalog, against a real kube-apiserver (the bed's management cluster):
// created beside the defaults, re-pointed at a new registry address on the next start; the default
// (production) catalog keeps its upstream images.
import { HttpKube } from "@berth/controllers/kube";
import { ImageKind, resourcePath } from "@berth/crds";
import { loadCrds } from "@berth/crds/manifests";
import { type Fleet, kubeConfigFrom, startFleet } from "@berth/e2e";
import { ApiextensionsV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultCatalog, installDefaultCatalog } from "./catalog.ts";
import { applyLocalSessionImages, LOCAL_IMAGE_NAMES } from "./localImages.ts";

let fleet: Fleet;
let kube: HttpKube;

beforeAll(async () => {
  fleet = await startFleet({ clusters: [{ name: "mgmt", kind: "management" }] });
  const kc = kubeConfigFrom(fleet.cluster("mgmt").kubeconfig);
  for (const crd of loadCrds())
    await kc.makeApiClient(ApiextensionsV1Api).createCustomResourceDefinition({ body: crd as never });
  kube = new HttpKube(kc);
  await installDefaultCatalog(kube);
});

afterAll(async () => {
  kube?.close();
  await fleet?.stop();
});

const imageOf = async (name: string) =>
  (await kube.json("GET", resourcePath(ImageKind, { name }))) as {
    metadata: { labels: Record<string, string> };
    spec: { image: string; kind: string; visibility: string };
  };

const refs = (host: string) => ({
  jupyterlab: `${host}/sessions/jupyterlab:aaaaaaaaaaaa`,
  "code-server": `${host}/sessions/code-server:bbbbbbbbbbbb`,
  terminal: `${host}/sessions/terminal:cccccccccccc`,
});

describe("the local session images", () => {
  it("are created beside the default images, named <kind>-local, public, labelled as the local catalog", async () => {
    const r = await applyLocalSessionImages(kube, refs("127.0.0.1:5001"));
    expect(r).toEqual({ created: Object.values(LOCAL_IMAGE_NAMES), updated: [] });
    const jl = await imageOf("jupyterlab-local");
    expect(jl.spec).toMatchObject({
      image: "127.0.0.1:5001/sessions/jupyterlab:aaaaaaaaaaaa",
      kind: "jupyterlab",
      visibility: "public",
    });
    expect(jl.metadata.labels["berth.dev/catalog"]).toBe("local");
    expect((await imageOf("jupyterlab")).spec.image).toBe("quay.io/jupyter/pytorch-notebook:cuda12-latest");
  });

  it("follow the registry to its new address at the next start", async () => {
    const r = await applyLocalSessionImages(kube, refs("127.0.0.1:5002"));
    expect(r).toEqual({ created: [], updated: Object.values(LOCAL_IMAGE_NAMES) });
    expect((await imageOf("terminal-local")).spec.image).toBe("127.0.0.1:5002/sessions/terminal:cccccccccccc");
  });

  it("never enter the default catalog, whose images stay upstream", () => {
    const images = defaultCatalog()
      .filter((e) => e.object.kind === "Image")
      .map((e) => (e.object.spec as { image: string }).image);
    expect(images.every((i) => !i.startsWith("127.0.0.1"))).toBe(true);
  });
});
