// Wire shapes of image builds.
import { DisplayName, ImageKindName } from "@berth/crds";
import { z } from "zod";

export const ImageBuild = z
  .object({
    id: z.string().meta({ example: "bld-8c1x0p2q3r4s" }),
    image_id: z.string().meta({ description: "The private image it makes (GET /api/v1/images/private/{id})." }),
    owner: z.string(),
    organization_id: z.string(),
    state: z.enum(["queued", "running", "succeeded", "failed", "cancelled"]),
    failure_reason: z.string().nullable(),
    base_image: z
      .string()
      .nullable()
      .meta({ description: "The catalog image given to the Dockerfile as ARG BASE_IMAGE." }),
    cluster_id: z.string().meta({ description: "The build cluster it runs on." }),
    digest: z
      .string()
      .nullable()
      .meta({ description: "The digest the build reported (checked against Berth's registry)." }),
    reused: z
      .boolean()
      .meta({ description: "True when an earlier build with identical inputs answered this request." }),
    log_truncated: z.boolean(),
    created_at: z.string(),
    job_created_at: z.string().nullable(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
  })
  .meta({ id: "ImageBuild" });
export type ImageBuild = z.infer<typeof ImageBuild>;

export const CreateImageBuildBody = z
  .object({
    dockerfile: z
      .string()
      .max(4 * 1024 * 1024)
      .meta({
        description:
          "The Dockerfile (at most 64 KiB by default); `ARG BASE_IMAGE` names the base image when one is given.",
        // Stated for clients; an empty one is refused with its own code (dockerfile_invalid), not validation_failed.
        minLength: 1,
      }),
    name: z.string().max(128).meta({
      description: "Repository name of the result (OCI grammar: lowercase, digits, '.', '_', '-').",
      // The OCI distribution grammar, stated; other text is refused as image_reference_invalid.
      pattern: "^[a-z0-9]+(?:(?:[._-]|__)[a-z0-9]+)*$",
    }),
    tag: z.string().max(128).optional().meta({ pattern: "^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$" }),
    base_image: z.string().max(253).optional().meta({ description: "A catalog image's name." }),
    kind: ImageKindName.optional(),
    display_name: DisplayName.optional(),
    organization_id: z.string().max(128).optional(),
  })
  .meta({ id: "CreateImageBuildRequest" });

export const ImageBuildList = z.object({ data: z.array(ImageBuild) }).meta({ id: "ImageBuildList" });
export const BuildIdParams = z.object({
  id: z.string().regex(/^bld-[a-z0-9]{12}$/, "a build id: bld- and 12 letters or digits"),
});
export const ClusterIdParams = z.object({ clusterId: z.string().regex(/^clu_[a-z0-9]{1,59}$/, "a cluster id: clu_…") });
export const BuildCluster = z
  .object({
    cluster_id: z.string(),
    marked_by: z.string(),
    marked_at: z.string(),
    push_secret: z.string().nullable().meta({
      description: "The Secret builds on this cluster push with (its name; its content stays on the cluster).",
    }),
  })
  .meta({ id: "BuildCluster" });
export const MarkBuildClusterBody = z
  .object({
    push_secret: z
      .string()
      .max(253)
      .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, "a Secret's name")
      .nullable()
      .optional()
      .meta({
        description:
          "A Secret of type kubernetes.io/dockerconfigjson in the cluster's builds namespace, for a registry that needs credentials to push; builds mount it. Berth keeps only the name.",
      }),
  })
  .meta({ id: "MarkBuildClusterRequest" })
  .optional();
export const BuildClusterList = z.object({ data: z.array(BuildCluster) }).meta({ id: "BuildClusterList" });
