// One volume as the caller may see it, with the sessions that mount it.

import type { Deps } from "../../deps.ts";
import type { Principal } from "../identity/principal.ts";
import { scopeOf } from "../identity/scope.ts";
import { mountsOf, priced, sharedMark, type VolumeView, visible } from "./volumeParts.ts";

export async function getVolume(deps: Deps, principal: Principal, id: string): Promise<VolumeView> {
  const v = await visible(deps, principal, id);
  return priced(deps, { ...v, ...sharedMark(scopeOf(principal), v.row, v.cr), mounts: await mountsOf(deps, v.row) });
}
