// Internal routes of other domains, mounted on the internal listener next to the built-in ones (inventory,
// status, usage, key set; routes.ts). Every internal route lives here in api/src/internal/: add one file,
// one import and one spread per domain, nothing else.
import { internalRoutes as connect } from "./connect.ts";
import { internalRoutes as imageBuilds } from "./image-builds.ts";
import { internalRoutes as monitoring } from "./metrics.ts";
import type { AnyInternalRoute } from "./route.ts";

export const domainInternalRoutes: AnyInternalRoute[] = [...connect, ...monitoring, ...imageBuilds];
