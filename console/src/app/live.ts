// Lets a view refresh when sessions change: on every stream message and every poll tick, debounced so a
// burst of events costs one call. Returns the unsubscribe function.
import type { LiveChange } from "../api/live-feed.ts";
import { feed } from "./context.ts";

/**
 * `refresh` is called once per burst with its last change and every change of the burst in order: a view
 * that acts on one type (an image's end, one session's events) looks through `burst`, since the last
 * change of a burst is often of another type or session.
 */
/** A burst this long is handed over at once: a stream that never pauses still reaches the page. */
export const MAX_BURST = 200;

export function onSessionsChanged(
  refresh: (last: LiveChange, burst: readonly LiveChange[]) => void,
  debounceMs = 200,
): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let burst: LiveChange[] = [];
  const flush = () => {
    const changes = burst;
    burst = [];
    const last = changes.at(-1);
    if (last) refresh(last, changes);
  };
  const handler = (e: Event) => {
    burst.push((e as CustomEvent<LiveChange>).detail);
    clearTimeout(timer);
    if (burst.length >= MAX_BURST) flush();
    else timer = setTimeout(flush, debounceMs);
  };
  feed.addEventListener("change", handler);
  return () => {
    clearTimeout(timer);
    burst = [];
    feed.removeEventListener("change", handler);
  };
}
