// The owner's bell when a build or an import ends (domain/notifications). Called inside the transaction
// that records the end, so the notification exists exactly when the end does; the webhook event of the
// same end comes from a trigger on that row (migration 20261126001200_image_webhooks.ts).
import type { Knex } from "knex";
import type { ImageBuildRow, PrivateImageRow } from "../../db/operations/images/types.ts";
import { notify } from "../notifications/notify.ts";

const BUILD_TITLES = {
  succeeded: "Image build succeeded",
  failed: "Image build failed",
  cancelled: "Image build cancelled",
} as const;

/** `image` is the build's image as it stands (absent once deleted, e.g. by a cancel). */
export async function announceBuildEnd(
  db: Knex,
  build: ImageBuildRow,
  image: Pick<PrivateImageRow, "display_name" | "repository" | "tag"> | undefined,
  at: Date,
): Promise<void> {
  if (build.state !== "succeeded" && build.state !== "failed" && build.state !== "cancelled") return;
  const name = image ? `${image.display_name} (${image.repository}:${image.tag})` : build.image_id;
  const body =
    build.state === "succeeded"
      ? `Your image ${name} was built; sessions can use it now.`
      : build.state === "failed"
        ? `The build of your image ${name} failed.${build.failure_reason ? ` ${build.failure_reason.slice(0, 500)}` : ""}`
        : `The build of your image ${name} was cancelled.`;
  await notify(db, {
    userId: build.owner_id,
    organizationId: build.organization_id,
    kind: "image_build.finished",
    title: BUILD_TITLES[build.state],
    body,
    data: { build_id: build.id, image_id: build.image_id, state: build.state, reason: build.failure_reason },
    at,
  });
}

export async function announceImportEnd(db: Knex, image: PrivateImageRow, at: Date): Promise<void> {
  if (image.source !== "import" || (image.state !== "ready" && image.state !== "failed")) return;
  const name = `${image.display_name} (${image.source_reference ?? image.repository})`;
  await notify(db, {
    userId: image.owner_id,
    organizationId: image.organization_id,
    kind: "image_import.finished",
    title: image.state === "ready" ? "Image imported" : "Image import failed",
    body:
      image.state === "ready"
        ? `Your image ${name} was imported; sessions can use it now.`
        : `The import of your image ${name} failed.${image.failure_reason ? ` ${image.failure_reason.slice(0, 500)}` : ""}`,
    data: {
      image_id: image.id,
      state: image.state,
      failure_code: image.failure_code,
      reason: image.failure_reason,
    },
    at,
  });
}
