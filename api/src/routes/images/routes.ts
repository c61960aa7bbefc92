// Members' private images: import from a public registry (answered at once, copied by the worker), list
// and read one's own with state and progress, delete. Ready images also appear in GET /api/v1/images (the
// catalog) as private images of their owner. Registered before the catalog's routes: /images/private and
// /images/import are not image names.

import { z } from "zod";
import {
  deletePrivateImage,
  getPrivateImage,
  listMyPrivateImages,
  requestImport,
} from "../../domain/images/privateImages.ts";
import { imageSigningKey } from "../../domain/images/trust.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { presentPrivateImage } from "./presenter.ts";
import {
  ImageIdParams,
  ImageSigningKey,
  ImportImageBody,
  ListPrivateImagesQuery,
  PrivateImage,
  PrivateImageList,
} from "./schemas.ts";

export const importImageRoute = defineRoute({
  method: "post",
  path: "/api/v1/images/import",
  operationId: "importImage",
  tags: ["images"],
  summary: "Import an image from a public registry as your private image",
  description: [
    "Answers 202 at once with the image in state `importing`; the worker resolves the reference (an index picks linux/amd64), copies what Berth's registry lacks and marks it `ready` with its digest and size, or `failed` with a reason. Follow `progress` here or `image.updated` events on `GET /api/v1/sessions/events`.",
    "A member holds at most 20 private images, counting ready ones and imports and builds in flight: one more is 403 `quota_exceeded` with `count` and `limit` in details. A failed import frees its slot. References with credentials, or that do not parse, are 400 `image_reference_invalid`.",
  ].join("\n\n"),
  auth: "user",
  body: ImportImageBody,
  idempotent: true,
  audit: "image.import",
  responses: { 202: PrivateImage },
  handler: async ({ deps, principal, body, audit }) => {
    const row = await requestImport(deps, principal, body);
    audit.target("image", row.id);
    return { status: 202, body: presentPrivateImage(row, deps.config.images?.registry?.pullPrefix) };
  },
});

export const listPrivateImagesRoute = defineRoute({
  method: "get",
  path: "/api/v1/images/private",
  operationId: "listPrivateImages",
  tags: ["images"],
  summary: "Your private images in every state, newest first, with the limit and how many count against it",
  auth: "user",
  query: ListPrivateImagesQuery,
  responses: { 200: PrivateImageList },
  handler: async ({ deps, principal, query }) => {
    const rows = await listMyPrivateImages(deps, principal, query.owner);
    const prefix = deps.config.images?.registry?.pullPrefix;
    return {
      status: 200,
      body: {
        data: rows.map((r) => presentPrivateImage(r, prefix)),
        limit: deps.config.images?.perMember ?? 20,
        count: rows.filter((r) => r.state !== "failed").length,
      },
    };
  },
});

export const getPrivateImageRoute = defineRoute({
  method: "get",
  path: "/api/v1/images/private/:id",
  operationId: "getPrivateImage",
  tags: ["images"],
  summary: "One of your private images, with its state and progress",
  auth: "user",
  params: ImageIdParams,
  responses: { 200: PrivateImage },
  handler: async ({ deps, principal, params }) => ({
    status: 200,
    body: presentPrivateImage(
      await getPrivateImage(deps, principal, params.id),
      deps.config.images?.registry?.pullPrefix,
    ),
  }),
});

export const deletePrivateImageRoute = defineRoute({
  method: "delete",
  path: "/api/v1/images/private/:id",
  operationId: "deletePrivateImage",
  tags: ["images"],
  summary: "Delete one of your private images (an import in flight is abandoned)",
  description: "Refused with 409 `image_in_use` while a session that is not over uses it. Frees its slot among the 20.",
  auth: "user",
  params: ImageIdParams,
  audit: "image.delete",
  responses: { 204: z.null() },
  handler: async ({ deps, principal, params, audit }) => {
    audit.target("image", params.id);
    await deletePrivateImage(deps, principal, params.id);
    return { status: 204, body: null };
  },
});

export const getSigningKeyRoute = defineRoute({
  method: "get",
  path: "/api/v1/images/signing-key",
  operationId: "getImageSigningKey",
  tags: ["images"],
  summary: "Berth's public signing key, to verify what Berth built or imported",
  description:
    "Berth signs the images it builds and imports (cosign's signature layout, so `cosign verify --key` accepts them). 404 when no key is configured (BERTH_IMAGE_SIGNING_KEY_FILE).",
  auth: "user",
  errors: ["not_found"],
  responses: { 200: ImageSigningKey },
  handler: async ({ deps }) => ({ status: 200, body: imageSigningKey(deps) }),
});

export const routes: RouteDef[] = [
  getSigningKeyRoute,
  importImageRoute,
  listPrivateImagesRoute,
  getPrivateImageRoute,
  deletePrivateImageRoute,
];
