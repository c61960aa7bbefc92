import { z } from "zod";
import { DisplayName, Id, rule } from "../fields.ts";
import { defineKind, statusOf } from "../kind.ts";

export const ImageKindName = z.enum(["jupyterlab", "code-server", "terminal"]);
export type ImageKindName = z.infer<typeof ImageKindName>;

export const ImageVisibility = z.enum(["public", "private"]);
export type ImageVisibility = z.infer<typeof ImageVisibility>;

export const ImageSpec = rule(
  z.object({
    displayName: DisplayName,
    /** A container image reference, pullable from every cluster a session may land on. */
    image: z
      .string()
      .min(1)
      .max(512)
      .regex(/^[^\s]+$/),
    kind: ImageKindName,
    visibility: ImageVisibility.default("public"),
    /** User id; required for private images, which only their owner sees. */
    owner: Id.optional(),
    description: z.string().max(4096).optional(),
  }),
  "self.visibility == 'public' || has(self.owner)",
  "a private image needs an owner",
  (s) => s.visibility === "public" || s.owner !== undefined,
);
export type ImageSpec = z.infer<typeof ImageSpec>;

export const ImageStatus = statusOf({});
export type ImageStatus = z.infer<typeof ImageStatus>;

export const ImageKind = defineKind({
  kind: "Image",
  plural: "images",
  shortNames: ["img"],
  namespaced: false,
  description: "A session container image: a public base image or a member's private one.",
  spec: ImageSpec,
  status: ImageStatus,
  printerColumns: [
    { name: "Kind", type: "string", jsonPath: ".spec.kind" },
    { name: "Visibility", type: "string", jsonPath: ".spec.visibility" },
    { name: "Owner", type: "string", jsonPath: ".spec.owner" },
    { name: "Image", type: "string", jsonPath: ".spec.image", priority: 1 },
  ],
});
export const Image = ImageKind.schema;
export type Image = z.infer<typeof Image>;
