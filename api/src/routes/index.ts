// Every route of the public API. Each routes/<noun>/routes.ts exports `routes: RouteDef[]`; add one
// import and one spread per noun, nothing else.
import type { RouteDef } from "../http/route.ts";
import { routes as auditLogs } from "./audit-logs/routes.ts";
import { routes as auth } from "./auth/routes.ts";
import { routes as budgets } from "./budgets/routes.ts";
import { routes as catalog } from "./catalog/routes.ts";
import { routes as clusters } from "./clusters/routes.ts";
import { routes as connect } from "./connect/routes.ts";
import { routes as credits } from "./credits/routes.ts";
import { routes as dashboard } from "./dashboard/routes.ts";
import { routes as fairShare } from "./fair-share/routes.ts";
import { routes as imageBuilds } from "./image-builds/routes.ts";
import { routes as images } from "./images/routes.ts";
import { routes as logs } from "./logs/routes.ts";
import { routes as metrics } from "./metrics/routes.ts";
import { routes as migLayouts } from "./mig-layouts/routes.ts";
import { routes as monitoring } from "./monitoring/routes.ts";
import { routes as nodePools } from "./node-pools/routes.ts";
import { routes as nodes } from "./nodes/routes.ts";
import { routes as notifications } from "./notifications/routes.ts";
import { routes as organizations } from "./organizations/routes.ts";
import { routes as projects } from "./projects/routes.ts";
import { routes as queue } from "./queue/routes.ts";
import { routes as quotas } from "./quotas/routes.ts";
import { routes as reclaim } from "./reclaim/routes.ts";
import { routes as sessions } from "./sessions/routes.ts";
import { routes as settings } from "./settings/routes.ts";
import { routes as signup } from "./signup/routes.ts";
import { routes as storage } from "./storage/routes.ts";
import { systemRoutes } from "./system/routes.ts";
import { routes as usage } from "./usage/routes.ts";
import { routes as userImports } from "./user-imports/routes.ts";
import { routes as users } from "./users/routes.ts";
import { routes as volumeSnapshots } from "./volume-snapshots/routes.ts";
import { routes as webhooks } from "./webhooks/routes.ts";

export const allRoutes: RouteDef[] = [
  // The system routes describe the contract, this list: they read it when asked, never before it exists.
  ...systemRoutes(() => allRoutes),
  ...auth,
  ...userImports, // before users: /users/imports/… are not user ids
  ...users,
  ...organizations,
  ...projects,
  ...quotas, // before the catalog: /resource-policies/requests is not a policy named "requests"
  ...images, // before the catalog: /images/private and /images/import are not image names
  ...imageBuilds,
  ...catalog,
  ...clusters,
  ...nodePools,
  ...migLayouts,
  ...nodes,
  ...sessions,
  ...reclaim,
  ...fairShare,
  ...queue,
  ...connect,
  ...logs,
  ...usage,
  ...credits,
  ...budgets,
  ...webhooks,
  ...storage,
  ...volumeSnapshots,
  ...auditLogs,
  ...notifications,
  ...settings,
  ...signup,
  ...monitoring,
  ...dashboard,
  ...metrics,
];
