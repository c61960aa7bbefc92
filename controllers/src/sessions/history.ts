// The history row follows every status the controller writes (SessionStore.recordTransition). A record
// that failed is kept in memory (SessionMemory.unrecorded) and made up for by the next reconcile or write;
// a new leader finds the records its predecessor died owing by reading the rows (behindRows).
import { type Session, sessionIdOf } from "@berth/crds";
import { phaseOf, type SessionPhaseName } from "./lifecycle.ts";
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

/**
 * A new leader's start: sessions whose history row holds another phase than they stand in (the resource's
 * status, or the interim one the row keeps) are remembered as unrecorded from the row's phase, so their
 * first reconcile records them. The resource is written before the row, so a leader killed between the
 * two left a status on the resource that only its own memory knew was unrecorded (the soak's session left
 * Terminating for good, its resource Terminated: docs/dev/soak.md).
 */
export function behindRows(
  memory: SessionMemory,
  sessions: Iterable<[string, Session]>,
  recorded: ReadonlyMap<string, string>,
): void {
  for (const [, s] of sessions) {
    const id = sessionIdOf(s.metadata.name as string);
    const phase = recorded.get(id);
    if (phase === undefined || phase === phaseOf(s) || memory.unrecorded.has(id)) continue;
    memory.unrecorded.set(id, { ...s, status: { ...s.status, phase: phase as SessionPhaseName } });
  }
}
