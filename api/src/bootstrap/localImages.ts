// Session images built on this machine (cdk8s/src/image/sessions.ts) and served from a local registry, for a
// local fleet whose node really runs containers (`npm start` with a real node): offered beside the default
// catalog's upstream images (api/src/bootstrap/catalog.ts), which such a node cannot pull. A production
// catalog never has them. Unlike the defaults they are re-applied at every start: the local registry's
// address and the images' content-keyed tags change, and nobody edits them by hand.
import { type KubeApi, KubeError } from "@berth/controllers/kube";
import { ImageKind, type ImageKindName, type KindDefinition, LABELS, resourcePath } from "@berth/crds";
import type { CatalogEntry } from "./catalog.ts";

export const LOCAL_IMAGE_NAMES: Record<ImageKindName, string> = {
  jupyterlab: "jupyterlab-local",
  "code-server": "code-server-local",
  terminal: "terminal-local",
};

const DESCRIPTIONS: Record<ImageKindName, [string, string]> = {
  jupyterlab: ["JupyterLab (built here)", "JupyterLab from PyPI on Debian, built on this machine; runs as jovyan."],
  "code-server": ["Code editor (code-server, built here)", "code-server from npm on Debian, built on this machine."],
  terminal: [
    "Web terminal (built here)",
    "bash in the browser (terminado and xterm.js from Debian), built on this machine.",
  ],
};

/** Image resources for references such as `127.0.0.1:5000/sessions/jupyterlab:<tag>`, one per kind given. */
export function localSessionImageEntries(refs: Partial<Record<ImageKindName, string>>): CatalogEntry[] {
  return Object.entries(refs).map(([kind, image]) => {
    const k = kind as ImageKindName;
    const [displayName, description] = DESCRIPTIONS[k];
    const object = ImageKind.build(
      { name: LOCAL_IMAGE_NAMES[k], labels: { [LABELS.partOf]: "berth", [LABELS.catalog]: "local" } },
      { displayName, image: image as string, kind: k, visibility: "public", description },
    );
    return { kind: ImageKind as unknown as KindDefinition, object };
  });
}

/** Creates the local images, or points the existing ones at these references; answers the names by outcome. */
export async function applyLocalSessionImages(
  kube: KubeApi,
  refs: Partial<Record<ImageKindName, string>>,
): Promise<{ created: string[]; updated: string[] }> {
  const out = { created: [] as string[], updated: [] as string[] };
  for (const { object } of localSessionImageEntries(refs)) {
    const name = object.metadata.name as string;
    try {
      await kube.json("POST", resourcePath(ImageKind), { body: object });
      out.created.push(name);
    } catch (e) {
      if (!(e instanceof KubeError) || e.status !== 409) throw e;
      await kube.json("PATCH", resourcePath(ImageKind, { name }), {
        body: { metadata: { labels: object.metadata.labels }, spec: object.spec },
      });
      out.updated.push(name);
    }
  }
  return out;
}
