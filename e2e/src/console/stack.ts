// What a console journey runs against: real Postgres (a fresh database), the real API process serving
// the built console, and, for the session journeys, the local fleet with the worker, the operators and
// the gateways. Every piece is the other workspaces' own start function.
import { ensureConsoleBuilt } from "@berth/console";
import { testConfig } from "../../../api/src/config.ts";
import { createTestDatabase, type TestDatabase } from "../../../api/src/db/testing.ts";
import { type RunningApi, startApi } from "../../../api/src/main.ts";

export const ADMIN_EMAIL = "admin@berth.local";
export const ADMIN_FIRST_PASSWORD = "first-admin-password-1";

export interface ConsoleStack {
  url: string;
  api: RunningApi;
  db: TestDatabase;
  stop(): Promise<void>;
}

export async function startConsoleStack(env: Record<string, string> = {}): Promise<ConsoleStack> {
  ensureConsoleBuilt({ log: (l) => console.log(l) });
  const db = await createTestDatabase({ migrate: false });
  let api: RunningApi | undefined;
  try {
    api = await startApi({
      config: testConfig({
        DATABASE_URL: db.url,
        BERTH_BOOTSTRAP_EMAIL: ADMIN_EMAIL,
        BERTH_BOOTSTRAP_PASSWORD: ADMIN_FIRST_PASSWORD,
        BERTH_LOG_LEVEL: "warn",
        ...env,
      }),
    });
  } catch (err) {
    await db.drop();
    throw err;
  }
  const running = api;
  return {
    url: running.url,
    api: running,
    db,
    async stop() {
      await running.stop();
      await db.drop();
    },
  };
}
