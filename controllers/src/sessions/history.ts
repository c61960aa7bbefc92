// The history row follows every status the controller writes (SessionStore.recordTransition). A record
// that failed is kept in memory (SessionMemory.unrecorded) and made up for by the next reconcile or write.
import type { Session } from "@berth/crds";
import type { SessionMemory } from "./memory.ts";
import { interimOf } from "./observed.ts";
import type { SessionStore } from "./store.ts";

/**
 * Records the change a failed record left out (from the status before it to `s`, as the session stands:
 * with the interim status it shows, if any), if any.
 */
export async function recordUnrecorded(store: SessionStore, memory: SessionMemory, id: string, s: Session) {
  const before = memory.unrecorded.get(id);
  if (!before) return;
  await store.recordTransition(before, s, interimOf(s));
  if (memory.unrecorded.get(id) === before) memory.unrecorded.delete(id);
}
