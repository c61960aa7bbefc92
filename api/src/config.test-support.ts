import { type Config, parseConfig } from "./config.ts";

/** The webhook secret key tests use (API and worker alike), so that what one seals the other opens. */
export const TEST_WEBHOOK_SECRET_KEYS = `test:${Buffer.alloc(32, 7).toString("base64")}`;

/** A complete config for tests and tools: parseConfig over a minimal environment plus overrides. */
export function testConfig(env: Record<string, string | undefined> = {}): Config {
  return parseConfig({
    DATABASE_URL: "postgres://berth:berth@127.0.0.1:5432/berth",
    BERTH_JWT_SECRET: "test-secret-test-secret-test-secret!!",
    BERTH_WEBHOOK_SECRET_KEYS: TEST_WEBHOOK_SECRET_KEYS,
    BERTH_LOG_LEVEL: "silent",
    BERTH_API_HOST: "127.0.0.1",
    BERTH_API_PORT: "0",
    BERTH_METRICS_HOST: "127.0.0.1",
    BERTH_METRICS_PORT: "0",
    ...env,
  });
}
