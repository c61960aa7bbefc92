// The catalog: offerings, resource presets, images and resource policies, stored as berth.dev custom
// resources in the management cluster. Everyone signed in reads what they may see (see
// domain/catalog/resources.ts); super_admins create and change. Lists are paged in memory (catalogs
// are small); names are the objects' Kubernetes names.
// One file per sub-noun: offerings.ts, presets.ts, images.ts, policies.ts (in the OpenAPI document's order).
import type { RouteDef } from "../../http/route.ts";
import { routes as images } from "./images.ts";
import { routes as offerings } from "./offerings.ts";
import { routes as policies } from "./policies.ts";
import { routes as presets } from "./presets.ts";

export const routes: RouteDef[] = [...offerings, ...presets, ...images, ...policies];
