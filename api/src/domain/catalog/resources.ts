// The catalog kinds the REST API serves, with who may see which object.
//   offerings        everyone signed in sees the enabled ones; super_admins all.
//   resource presets everyone signed in.
//   images           public ones to everyone; a private one to its owner; super_admins all.
//   resource policies the global one to everyone; an organization's to its members; a project's to those
//                    who see the project; a user's (an approved quota request) to that user and the
//                    administrators of its organization; super_admins all.
// Writes (create, update) are for super_admins.
import { ImageKind, type KindDefinition, OfferingKind, ResourcePolicyKind, ResourcePresetKind } from "@berth/crds";
import type { Scope } from "../identity/scope.ts";
import type { KubeObject } from "./store.ts";

export interface VisibilityContext {
  scope: Scope;
  /** Projects of the organizations the caller administers (for project-scoped policies). */
  adminOrgProjects: Set<string>;
}

export interface CatalogResource {
  kind: KindDefinition;
  /** For messages and audit: "offering". */
  noun: string;
  visible(o: KubeObject, v: VisibilityContext): boolean;
  /** Whether a visibility check needs adminOrgProjects (one query). */
  needsProjects?: boolean;
}

const spec = (o: KubeObject) => o.spec as Record<string, unknown>;

export const offerings: CatalogResource = {
  kind: OfferingKind as unknown as KindDefinition,
  noun: "offering",
  visible: (o, v) => v.scope.all || spec(o).enabled !== false,
};

export const presets: CatalogResource = {
  kind: ResourcePresetKind as unknown as KindDefinition,
  noun: "resource preset",
  visible: () => true,
};

export const images: CatalogResource = {
  kind: ImageKind as unknown as KindDefinition,
  noun: "image",
  visible: (o, v) => v.scope.all || spec(o).visibility !== "private" || spec(o).owner === v.scope.userId,
};

export const policies: CatalogResource = {
  kind: ResourcePolicyKind as unknown as KindDefinition,
  noun: "resource policy",
  needsProjects: true,
  visible: (o, v) => {
    if (v.scope.all) return true;
    const s = spec(o).scope as { kind: string; id?: string; organization?: string } | undefined;
    if (!s || s.kind === "global") return true;
    if (s.kind === "user")
      return (
        s.id === v.scope.userId || (s.organization !== undefined && v.scope.adminOrganizations.has(s.organization))
      );
    if (s.kind === "organization") return s.id !== undefined && v.scope.organizations.has(s.id);
    return s.id !== undefined && (v.scope.projects.has(s.id) || v.adminOrgProjects.has(s.id));
  },
};
