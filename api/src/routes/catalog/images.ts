// /api/v1/images: the catalog's session images; a super_admin's image must be signed (domain/images/trust.ts).
import { Paged, pageOf } from "../../db/paging.ts";
import { checkImageOwner } from "../../domain/catalog/imageOwner.ts";
import { createCatalog, getCatalog, listCatalog, updateCatalog } from "../../domain/catalog/operations.ts";
import { images } from "../../domain/catalog/resources.ts";
import { assertSigned } from "../../domain/images/trust.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { presentImage } from "./presenter.ts";
import { CreateImageBody, Image, ListImagesQuery, NameParams, UpdateImageBody } from "./schemas.ts";
import { toSpec } from "./shared.ts";

const IMAGE_FIELDS = {
  display_name: "displayName",
  image: "image",
  kind: "kind",
  visibility: "visibility",
  owner: "owner",
  description: "description",
};

export const listImagesRoute = defineRoute({
  method: "get",
  path: "/api/v1/images",
  operationId: "listImages",
  tags: ["catalog"],
  summary: "Session images: the public base images and your private ones",
  auth: "user",
  query: ListImagesQuery,
  responses: { 200: Paged(Image) },
  handler: async ({ deps, principal, query }) => {
    const items = await listCatalog(
      deps,
      principal,
      images,
      (o) => query.kind === undefined || o.spec.kind === query.kind,
    );
    return { status: 200, body: pageOf(items, query, presentImage) };
  },
});

export const getImageRoute = defineRoute({
  method: "get",
  path: "/api/v1/images/:name",
  operationId: "getImage",
  tags: ["catalog"],
  summary: "An image",
  auth: "user",
  params: NameParams,
  responses: { 200: Image },
  handler: async ({ deps, principal, params }) => ({
    status: 200,
    body: presentImage(await getCatalog(deps, principal, images, params.name)),
  }),
});

export const createImageRoute = defineRoute({
  method: "post",
  path: "/api/v1/images",
  operationId: "createImage",
  tags: ["catalog"],
  summary: "Add an image to the catalog (super_admin)",
  description: "Members add private images with POST /api/v1/images/import and /api/v1/image-builds.",
  auth: "user",
  body: CreateImageBody,
  idempotent: true,
  audit: "image.create",
  errors: ["already_exists", "conflict", "image_unsigned"],
  responses: { 201: Image },
  handler: async ({ deps, principal, body, audit }) => {
    audit.target("image", body.name);
    await checkImageOwner(deps, principal, body.owner);
    if (principal.isSuperAdmin) await assertSigned(deps, body.image, "image");
    const o = await createCatalog(deps, principal, images, body.name, toSpec(body, IMAGE_FIELDS));
    return { status: 201, body: presentImage(o) };
  },
});

export const updateImageRoute = defineRoute({
  method: "patch",
  path: "/api/v1/images/:name",
  operationId: "updateImage",
  tags: ["catalog"],
  summary: "Change an image (super_admin)",
  auth: "user",
  params: NameParams,
  body: UpdateImageBody,
  audit: "image.update",
  errors: ["image_unsigned"],
  responses: { 200: Image },
  handler: async ({ deps, principal, params, body, audit }) => {
    audit.target("image", params.name);
    await checkImageOwner(deps, principal, body.owner);
    if (principal.isSuperAdmin && body.image !== undefined) await assertSigned(deps, body.image, "image");
    const o = await updateCatalog(deps, principal, images, params.name, (spec) => ({
      ...spec,
      ...toSpec(body, IMAGE_FIELDS),
    }));
    return { status: 200, body: presentImage(o) };
  },
});

export const routes: RouteDef[] = [listImagesRoute, createImageRoute, getImageRoute, updateImageRoute];
