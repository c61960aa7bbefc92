import { z } from "zod";
import { Page } from "../../db/paging.ts";
import { Id } from "../users/schemas.ts";

const Timestamp = z.string().meta({ description: "RFC 3339, UTC." });
const Name = z.string().regex(/\S/, "not only spaces").trim().min(1).max(128);

export const Project = z
  .object({
    id: z.string().meta({ example: "prj_0q4w7e2r9t1y6u3i8o5p" }),
    organization_id: z.string(),
    name: z.string(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: "Project" });
export type Project = z.infer<typeof Project>;

export const ProjectParams = z.object({ projectId: Id });
export const ProjectMemberParams = z.object({ projectId: Id, userId: Id });
export const ListProjectsQuery = Page.extend({
  organization: Id.optional().meta({
    description: "Only this organization's projects (ignored when outside your scope).",
  }),
});

export const CreateProjectBody = z.object({ organization_id: Id, name: Name }).meta({ id: "CreateProjectRequest" });
export const UpdateProjectBody = z.object({ name: Name.optional() }).meta({ id: "UpdateProjectRequest" });
