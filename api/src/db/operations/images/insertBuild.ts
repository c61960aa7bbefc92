import type { Knex } from "knex";
import { countSlots, type NewPrivateImage } from "./insertPrivateImage.ts";
import { ACTIVE_BUILD_STATES, type ImageBuildRow, type PrivateImageRow } from "./types.ts";

export type NewBuild = Omit<
  ImageBuildRow,
  | "state"
  | "failure_reason"
  | "reported_digest"
  | "cancel_requested"
  | "log_bytes"
  | "log_truncated"
  | "reused"
  | "dispatched_at"
  | "job_phase"
  | "job_message"
  | "log_cursor_at"
  | "log_cursor_n"
  | "job_created_at"
  | "started_at"
  | "finished_at"
>;

export type InsertBuildOutcome =
  | { build: ImageBuildRow; image: PrivateImageRow }
  | { reuse: ImageBuildRow }
  | { refused: "images"; count: number }
  | { refused: "member_build" | "organization_builds"; count: number };

/**
 * Under the owner's lock (the same one imports take) and the organization's: an identical build of the
 * owner, in flight or succeeded with its image still there, is reused; otherwise the member's images, the
 * member's builds in flight (one) and the organization's (`perOrganization`) are counted, and the image
 * (state building) and the build (queued) are written together.
 */
export async function insertBuild(
  db: Knex,
  image: NewPrivateImage,
  build: NewBuild,
  limits: { images: number; perOrganization: number },
): Promise<InsertBuildOutcome> {
  return db.transaction(async (tx) => {
    await tx.raw("SELECT pg_advisory_xact_lock(hashtext(?))", [`image_builds/org/${build.organization_id}`]);
    await tx.raw("SELECT pg_advisory_xact_lock(hashtext(?))", [`private_images/owner/${build.owner_id}`]);
    const same = (await tx("image_builds as b")
      .join("private_images as i", "i.id", "b.image_id")
      .where({ "b.owner_id": build.owner_id, "b.input_hash": build.input_hash })
      .where((q) => q.whereIn("b.state", ACTIVE_BUILD_STATES).orWhere({ "b.state": "succeeded", "i.state": "ready" }))
      .orderBy("b.created_at", "desc")
      .first("b.*")) as ImageBuildRow | undefined;
    if (same) return { reuse: same };
    const mine = await countActive(tx, { owner_id: build.owner_id });
    if (mine >= 1) return { refused: "member_build", count: mine };
    const org = await countActive(tx, { organization_id: build.organization_id });
    if (org >= limits.perOrganization) return { refused: "organization_builds", count: org };
    const slots = await countSlots(tx, build.owner_id);
    if (slots >= limits.images) return { refused: "images", count: slots };
    const [img] = (await tx("private_images").insert(image).returning("*")) as PrivateImageRow[];
    const [row] = (await tx("image_builds")
      .insert({ ...build, state: "queued" })
      .returning("*")) as ImageBuildRow[];
    return { build: row as ImageBuildRow, image: img as PrivateImageRow };
  });
}

async function countActive(tx: Knex, where: Record<string, string>): Promise<number> {
  const r = (await tx("image_builds").where(where).whereIn("state", ACTIVE_BUILD_STATES).count({ n: "*" }).first()) as
    | { n: string | number }
    | undefined;
  return Number(r?.n ?? 0);
}
