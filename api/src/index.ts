// The @berth/api package: what other workspaces (e2e's `npm start`, the console's types) use.
export { startApi, type RunningApi, type StartApiOptions } from "./main.ts";
export { parseConfig, testConfig, ConfigError, Secret, type Config } from "./config.ts";
export { contractRoutes } from "./contract.ts";
export { ERROR_CODES, type ErrorCode } from "./errors.ts";
export { startPostgres, type PostgresServer } from "./db/server.ts";
