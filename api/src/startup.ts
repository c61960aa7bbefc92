// Work done once per start, after migrations and before the listeners open: bootstrap administrator,
// default catalog. Tasks must be idempotent (every replica runs them at every start). Add one line per task.
import { bootstrapAdminTask, defaultCatalogTask } from "./bootstrap/index.ts";
import type { StartupTask } from "./bootstrap/task.ts";

export const startupTasks: StartupTask[] = [bootstrapAdminTask(), defaultCatalogTask];
