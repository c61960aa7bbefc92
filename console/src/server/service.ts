// The console's place in `npm start` (e2e/src/start/main.ts SERVICES): build the console when it is
// missing or stale, before anyone opens it. The API process serves its files (api/src/http/console.ts); this service runs no
// process of its own. Shaped like e2e's Service without importing e2e (console must not depend on it).
import { ensureConsoleBuilt } from "./build.ts";

export const consoleService = {
  name: "console",
  async start(ctx: { published: Readonly<Record<string, string>>; log: (line: string) => void }) {
    const r = ensureConsoleBuilt({ log: ctx.log });
    if (!r.built) ctx.log(`[berth] console build is current (${r.dist})`);
    const api = ctx.published.BERTH_API_URL ?? ctx.published.API_URL;
    return {
      endpoints: api ? [{ name: "console", url: `${api}/` }] : [],
      async stop() {},
    };
  },
};
