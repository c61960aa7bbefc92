// Internal routes of other domains, mounted on the internal listener next to the built-in ones (inventory,
// status, usage, key set). Add one import and one spread per domain, nothing else.
import { internalRoutes as connect } from "../routes/connect/verify.ts";
import { internalRoutes as imageBuilds } from "../routes/image-builds/internal.ts";
import { internalRoutes as monitoring } from "../routes/monitoring/forward.ts";
import type { AnyInternalRoute } from "./route.ts";

export const domainInternalRoutes: AnyInternalRoute[] = [...connect, ...monitoring, ...imageBuilds];
