// The committed CRD YAML, for whoever installs it (the worker at start-up, tests, cdk8s). Node-only,
// hence not in the package's main entry, which the console bundles for the browser.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";

/** crds/generated/crds.yaml: every CustomResourceDefinition of berth.dev. */
export const CRDS_YAML_PATH = fileURLToPath(new URL("../generated/crds.yaml", import.meta.url));

export interface CrdManifest {
  apiVersion: "apiextensions.k8s.io/v1";
  kind: "CustomResourceDefinition";
  metadata: { name: string };
  spec: { group: string; names: { kind: string; plural: string }; scope: "Namespaced" | "Cluster" };
}

export function loadCrds(): CrdManifest[] {
  return parseAllDocuments(readFileSync(CRDS_YAML_PATH, "utf8")).map((d) => d.toJS() as CrdManifest);
}
