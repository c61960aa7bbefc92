// Start-up tasks of the identity and catalog domains (listed in api/src/startup.ts).
import type { Deps } from "../deps.ts";
import { type BootstrapAdminResult, ensureBootstrapAdmin } from "./admin.ts";
import { installDefaultCatalog } from "./catalog.ts";
import type { StartupTask } from "./task.ts";

export {
  BOOTSTRAP_ADMIN_MARKER,
  type BootstrapAdminOptions,
  type BootstrapAdminResult,
  ensureBootstrapAdmin,
} from "./admin.ts";
export {
  type CatalogEntry,
  type CatalogInstallResult,
  defaultCatalog,
  type InstallCatalogOptions,
  installDefaultCatalog,
  SYSTEM_NAMESPACE,
} from "./catalog.ts";

/** How a generated password reaches the person who started Berth: once, on the terminal, never in the logs. */
export function bootstrapBanner(r: BootstrapAdminResult): string {
  return [
    "",
    "  Berth bootstrap administrator created (shown once):",
    `    email:    ${r.email}`,
    `    password: ${r.generatedPassword}`,
    "  Sign in and change it: the account must change its password at first sign-in.",
    "",
  ].join("\n");
}

export function bootstrapAdminTask(
  opts: { announce?: (text: string) => void; onResult?: (r: BootstrapAdminResult) => void } = {},
): StartupTask {
  const announce = opts.announce ?? ((text: string) => process.stdout.write(`${text}\n`));
  return {
    name: "bootstrap-admin",
    async run(deps: Deps) {
      const r = await ensureBootstrapAdmin(deps.db, {
        email: deps.config.auth.bootstrapEmail,
        ...(deps.config.auth.bootstrapPassword ? { password: deps.config.auth.bootstrapPassword.reveal() } : {}),
      });
      opts.onResult?.(r);
      if (!r.created) return;
      deps.log.info(
        { email: r.email, userId: r.userId, passwordGenerated: r.generatedPassword !== undefined },
        "bootstrap administrator created",
      );
      if (r.generatedPassword) announce(bootstrapBanner(r));
    },
  };
}

export const defaultCatalogTask: StartupTask = {
  name: "default-catalog",
  async run(deps: Deps) {
    if (!deps.kube) {
      deps.log.warn("no management cluster configured (BERTH_KUBECONFIG): default catalog not installed");
      return;
    }
    await installDefaultCatalog(deps.kube, { log: deps.log });
  },
};
