// One piece of work done once per start, after migrations and before the listeners open (startup.ts
// lists them). Tasks must be idempotent: every replica runs them at every start.
import type { Deps } from "../deps.ts";

export interface StartupTask {
  name: string;
  run(deps: Deps): Promise<void>;
}
