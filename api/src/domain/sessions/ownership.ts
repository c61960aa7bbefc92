// Which organization and project a new resource (a session, a volume, a private image) belongs to, from
// what the request names and what the caller is a member of.
import { findProjectById } from "../../db/operations/projects/findProjectById.ts";
import type { Deps } from "../../deps.ts";
import { Invalid } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { scopeOf } from "../identity/scope.ts";

/** A 422 issue: the body's `field` names nothing the caller may use. */
export const issue = (field: string, message: string) => ({
  path: ["body", field],
  message,
  code: "invalid_reference",
});

/** Which organization the session belongs to: named, implied by the project, or the caller's only one. */
export async function resolveOwnership(
  deps: Deps,
  p: Principal,
  input: { organization_id?: string; project_id?: string },
): Promise<{ organizationId: string; projectId: string | null }> {
  const scope = scopeOf(p);
  let organizationId = input.organization_id;
  let projectId: string | null = null;
  if (input.project_id) {
    const project = await findProjectById(deps.db, input.project_id);
    const member =
      project && (scope.all || scope.adminOrganizations.has(project.organization_id) || scope.projects.has(project.id));
    if (!project || !member)
      throw new Invalid("the request is invalid", [issue("project_id", "no such project among yours")]);
    if (organizationId && organizationId !== project.organization_id)
      throw new Invalid("the request is invalid", [issue("project_id", "the project belongs to another organization")]);
    organizationId = project.organization_id;
    projectId = project.id;
  }
  if (!organizationId) {
    const mine = [...scope.organizations];
    if (mine.length !== 1) {
      throw new Invalid("the request is invalid", [
        issue(
          "organization_id",
          mine.length === 0
            ? "you belong to no organization; name one"
            : "you belong to several organizations; name one",
        ),
      ]);
    }
    organizationId = mine[0] as string;
  }
  if (!scope.all && !scope.organizations.has(organizationId))
    throw new Invalid("the request is invalid", [issue("organization_id", "no such organization among yours")]);
  return { organizationId, projectId };
}
