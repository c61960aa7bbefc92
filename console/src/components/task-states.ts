// Pending, error and empty states for every @lit/task on every page, the same way: a labelled status
// while loading (the last value stays on screen during a refresh), the error panel with "Try again",
// and an empty state that says what to do.
import type { Task } from "@lit/task";
import { html, type TemplateResult } from "lit";
import "./empty-state/index.ts";
import "./error-panel/index.ts";
import "./pending/index.ts";

export interface TaskStates<T> {
  complete: (value: T) => unknown;
  isEmpty?: (value: T) => boolean;
  empty?: () => TemplateResult;
  pendingLabel?: string;
  errorHeading?: string;
}

export function renderTask<T>(task: Task<readonly unknown[], T>, s: TaskStates<T>): unknown {
  const pending = () => html`<berth-pending label=${s.pendingLabel ?? "Loading…"}></berth-pending>`;
  const done = (v: T) => (s.isEmpty?.(v) && s.empty ? s.empty() : s.complete(v));
  return task.render({
    initial: pending,
    pending: () => (task.value !== undefined ? done(task.value) : pending()),
    complete: done,
    error: (e) =>
      html`<berth-error-panel retryable heading=${s.errorHeading ?? "This could not be loaded"} .error=${e} @berth-retry=${() => void task.run()}></berth-error-panel>`,
  });
}
