// Wire shapes of members' private images (imports now; builds share the shape).
import { DisplayName, ImageKindName } from "@berth/crds";
import { z } from "zod";

export const PrivateImageState = z.enum(["importing", "building", "ready", "failed"]);

export const PrivateImage = z
  .object({
    id: z.string().meta({
      description:
        "The image's id; also its name in the catalog once ready (give it as `image` when creating a session).",
      example: "img-4k2j9x0a1b2c",
    }),
    name: z.string().meta({ description: "Repository name in Berth's registry (last path component)." }),
    tag: z.string(),
    display_name: z.string(),
    kind: ImageKindName,
    owner: z.string(),
    organization_id: z.string(),
    source: z.enum(["import", "build"]),
    source_reference: z.string().nullable().meta({ description: "The public reference an import copies." }),
    state: PrivateImageState,
    progress: z
      .object({ bytes_copied: z.int(), bytes_total: z.int().nullable() })
      .meta({ description: "Bytes copied so far and in all (known once the manifest is read)." }),
    image: z
      .string()
      .nullable()
      .meta({ description: "Once ready: the reference sessions pull, Berth's registry by digest." }),
    digest: z.string().nullable(),
    size_bytes: z.int().nullable(),
    failure: z
      .object({
        code: z.string().meta({
          description:
            "not_found, unauthorized, too_large, no_matching_platform, unreachable, digest_mismatch, unsupported_manifest, registry_error, unsigned (signatures are required and the source has none by a trusted key)",
        }),
        reason: z.string(),
      })
      .nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    ready_at: z.string().nullable(),
  })
  .meta({ id: "PrivateImage" });
export type PrivateImage = z.infer<typeof PrivateImage>;

export const ImportImageBody = z
  .object({
    reference: z.string().min(1).max(1024).meta({
      description: "A public registry reference: `python:3.12`, `ghcr.io/org/app:1`, `quay.io/org/app@sha256:…`.",
      example: "docker.io/library/python:3.12",
    }),
    name: z.string().max(128).optional().meta({
      description: "Repository name (default: the reference's last component).",
      // The grammar the API checks (image_reference_invalid otherwise), stated for clients.
      pattern: "^[a-z0-9]+(?:(?:[._-]|__)[a-z0-9]+)*$",
    }),
    tag: z.string().max(128).optional().meta({
      description: "Tag in Berth's registry (default: the reference's).",
      pattern: "^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$",
    }),
    kind: ImageKindName.optional().meta({ description: "What the session opens (default jupyterlab)." }),
    display_name: DisplayName.optional(),
    organization_id: z
      .string()
      .max(128)
      .optional()
      .meta({ description: "Needed when you belong to several organizations." }),
  })
  .meta({ id: "ImportImageRequest" });

export const PrivateImageList = z
  .object({ data: z.array(PrivateImage), limit: z.int(), count: z.int() })
  .meta({ id: "PrivateImageList" });
export const ListPrivateImagesQuery = z.object({
  owner: z.string().max(128).optional().meta({ description: "Another member's (super_admins)." }),
});
export const ImageIdParams = z.object({
  id: z.string().regex(/^img-[a-z0-9]{12}$/, "an image id: img- and 12 letters or digits"),
});

export const ImageSigningKey = z
  .object({
    algorithm: z.enum(["ecdsa-p256-sha256", "ed25519"]),
    public_key: z.string().meta({ description: "PEM (SubjectPublicKeyInfo)." }),
    name: z.string().meta({ description: "How verdicts name it: berth." }),
  })
  .meta({ id: "ImageSigningKey" });
