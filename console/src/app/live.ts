// Lets a view refresh when sessions change: on every stream message and every poll tick, debounced so a
// burst of events costs one request. Returns the unsubscribe function.
import type { LiveChange } from "../api/live-feed.ts";
import { feed } from "./context.ts";

export function onSessionsChanged(refresh: (change: LiveChange) => void, debounceMs = 200): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let last: LiveChange | undefined;
  const handler = (e: Event) => {
    last = (e as CustomEvent<LiveChange>).detail;
    clearTimeout(timer);
    timer = setTimeout(() => refresh(last as LiveChange), debounceMs);
  };
  feed.addEventListener("change", handler);
  return () => {
    clearTimeout(timer);
    feed.removeEventListener("change", handler);
  };
}
