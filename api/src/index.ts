// The @berth/api package: what other workspaces (e2e's `npm start`, the console's types) use.

export { type Config, ConfigError, parseConfig, Secret } from "./config.ts";
export { contractRoutes } from "./contract.ts";
export { type PostgresServer, startPostgres } from "./db/server.ts";
export { ERROR_CODES, type ErrorCode } from "./errors.ts";
export { type RunningApi, type StartApiOptions, startApi } from "./main.ts";
