// Members' private images: asked for (an import now, a build later), counted against the per-member
// limit under the owner's lock, copied by the worker (api/src/worker/imports.ts), published as a private
// Image resource whose reference names Berth's registry by digest, and deleted by their owner.

import { randomBytes } from "node:crypto";
import { ImageKind, LABELS, labelValue, resourcePath } from "@berth/crds";
import { findPrivateImage } from "../../db/operations/images/findPrivateImage.ts";
import { insertPrivateImageWithinLimit } from "../../db/operations/images/insertPrivateImage.ts";
import { listPrivateImages } from "../../db/operations/images/listPrivateImages.ts";
import type { PrivateImageRow } from "../../db/operations/images/types.ts";
import { deletePrivateImageRow } from "../../db/operations/images/updatePrivateImage.ts";
import type { Deps } from "../../deps.ts";
import { Conflict, DomainError, Forbidden, NotFound, QuotaExceeded, Unavailable } from "../../errors.ts";
import { catalogClient, type KubeObject, kubeStatus } from "../catalog/store.ts";
import type { Principal } from "../identity/principal.ts";
import { resolveOwnership } from "../sessions/ownership.ts";
import { emitImageUpdated } from "./events.ts";
import { BadReference, formatReference, PATH_COMPONENT, parseReference, TAG } from "./reference.ts";
import { sourceRefusal, targetClient } from "./sources.ts";

export type ImageKindName = "jupyterlab" | "code-server" | "terminal";

export interface ImportInput {
  reference: string;
  name?: string | undefined;
  tag?: string | undefined;
  kind?: ImageKindName | undefined;
  display_name?: string | undefined;
  organization_id?: string | undefined;
}

const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";
export function newPrivateImageId(): string {
  let s = "";
  for (const b of randomBytes(24)) if (b < 252 && s.length < 12) s += ALPHABET[b % 36];
  return `img-${s.padEnd(12, "0")}`;
}

function badReference(reason: string, message: string, path: string): DomainError {
  return new DomainError("image_reference_invalid", message, {
    reason,
    issues: [{ path: ["body", path], message, code: reason }],
  });
}

function imagesConfig(deps: Pick<Deps, "config">) {
  const c = deps.config.images;
  if (!c?.registry)
    throw new Unavailable("private images need Berth's registry, and none is configured (BERTH_REGISTRY_URL)");
  return c as typeof c & { registry: NonNullable<typeof c.registry> };
}

/** Accepts an import: the row (state importing) is written under the limit; the worker copies. */
export async function requestImport(deps: Deps, principal: Principal, input: ImportInput): Promise<PrivateImageRow> {
  const config = imagesConfig(deps);
  let ref: ReturnType<typeof parseReference>;
  try {
    ref = parseReference(input.reference);
  } catch (e) {
    if (e instanceof BadReference) throw badReference(e.reason, e.message, "reference");
    throw e;
  }
  const name = input.name ?? ref.repository.split("/").at(-1) ?? "image";
  if (!PATH_COMPONENT.test(name) || name.length > 128)
    throw badReference("syntax", "a name is lowercase letters and digits separated by '.', '_', '__' or '-'", "name");
  const tag = input.tag ?? ref.tag ?? (ref.digest ? `sha256-${ref.digest.slice(7, 19)}` : "latest");
  if (!TAG.test(tag))
    throw badReference(
      "syntax",
      "a tag is letters, digits, '_', '.' and '-' (at most 128), not starting with '.' or '-'",
      "tag",
    );
  const refusal = await sourceRefusal(config, ref.registry);
  if (refusal)
    throw new DomainError("image_source_forbidden", `Berth does not import from internal addresses: ${refusal}`, {
      registry: ref.registry,
      reason: refusal,
    });
  const { organizationId } = await resolveOwnership(deps, principal, input);
  const now = deps.clock.now();
  const id = newPrivateImageId();
  const result = await insertPrivateImageWithinLimit(
    deps.db,
    {
      id,
      owner_id: principal.userId,
      organization_id: organizationId,
      source: "import",
      source_reference: formatReference(ref),
      display_name: input.display_name ?? `${name}:${tag}`,
      kind: input.kind ?? "jupyterlab",
      repository: `${organizationId}/${principal.userId}/${name}`.toLowerCase(),
      tag,
      state: "importing",
      created_at: now,
      updated_at: now,
    },
    config.perMember,
  );
  if ("refused" in result)
    throw new QuotaExceeded(
      `you hold ${result.refused.count} private images (ready, importing or building), the most a member may; delete one first`,
      { quota: "private_images_per_member", count: result.refused.count, limit: config.perMember },
    );
  await emitImageUpdated(deps.db, result.row);
  return result.row;
}

/** The caller's private images (all states); a super_admin may name another owner. */
export async function listMyPrivateImages(
  deps: Deps,
  principal: Principal,
  ownerId?: string,
): Promise<PrivateImageRow[]> {
  const owner = ownerId ?? principal.userId;
  if (owner !== principal.userId && !principal.isSuperAdmin)
    throw new Forbidden("you see only your own private images");
  return listPrivateImages(deps.db, owner);
}

export async function getPrivateImage(deps: Deps, principal: Principal, id: string): Promise<PrivateImageRow> {
  const row = await findPrivateImage(deps.db, id);
  if (!row || (row.owner_id !== principal.userId && !principal.isSuperAdmin)) throw new NotFound("image", id);
  return row;
}

/** Sessions not yet over that use the image. */
async function sessionsUsing(deps: Deps, id: string): Promise<string[]> {
  const rows = (await deps
    .db("sessions")
    .where({ image: id })
    .whereNotIn("phase", ["Terminated", "Failed"])
    .select("id")
    .limit(50)) as { id: string }[];
  return rows.map((r) => r.id);
}

/**
 * Deletes a private image (its owner or a super_admin): refused while a session uses it. An import in
 * flight is abandoned (the worker notices the row is gone). The catalog resource goes first, then the
 * row (which frees the slot), then the manifest in Berth's registry (best effort: some refuse deletes).
 */
export async function deletePrivateImage(deps: Deps, principal: Principal, id: string): Promise<void> {
  const row = await getPrivateImage(deps, principal, id);
  const sessions = await sessionsUsing(deps, id);
  if (sessions.length > 0)
    throw new Conflict(
      `image ${id} is used by ${sessions.length} session(s); end them first`,
      { image: id, sessions },
      "image_in_use",
    );
  if (deps.kube) {
    try {
      await catalogClient(deps.kube).json("DELETE", imagePath(id));
    } catch (e) {
      if (kubeStatus(e) !== 404)
        throw new Unavailable("the image's catalog entry could not be removed; retry", { image: id });
    }
  }
  await deletePrivateImageRow(deps.db, id);
  const target = deps.config.images ? targetClient(deps.config.images) : undefined;
  if (row.digest && target)
    await target
      .deleteManifest(row.repository, row.digest)
      .catch((err: unknown) =>
        deps.log.warn({ err, image: id }, "the manifest stays in the registry; delete it there"),
      );
}

const imagePath = (name: string) => resourcePath(ImageKind, { name });

/** The catalog resource of a ready image: private, its owner's, pulled by digest from Berth's registry. */
export function imageResource(row: PrivateImageRow, pullPrefix: string, digest: string): KubeObject {
  return ImageKind.build(
    {
      name: row.id,
      labels: {
        [LABELS.partOf]: "berth",
        [LABELS.owner]: labelValue(row.owner_id),
        [LABELS.organization]: labelValue(row.organization_id),
      },
    },
    {
      displayName: row.display_name.slice(0, 128),
      image: `${pullPrefix}/${row.repository}@${digest}`,
      kind: row.kind,
      visibility: "private",
      owner: row.owner_id,
      description: row.source_reference
        ? `imported from ${row.source_reference}`
        : `built as ${row.repository}:${row.tag}`,
    },
  ) as unknown as KubeObject;
}
