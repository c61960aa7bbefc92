// What a service of `npm start` is (main.ts runs them, services.ts lists them).
import type { Fleet } from "../testbed/types.ts";

/** The services' log level (BERTH_LOG_LEVEL, default warn). */
export const logLevel = process.env.BERTH_LOG_LEVEL ?? "warn";

export interface ServiceContext {
  root: string;
  /** The clone's ignored .data folder. */
  dataDir: string;
  fleet: Fleet;
  /** Values earlier services published (connection strings, URLs). */
  published: Readonly<Record<string, string>>;
  log: (line: string) => void;
}

export interface RunningService {
  /** Printed in the table, e.g. { name: "api", url: "http://127.0.0.1:8080" }. */
  endpoints?: { name: string; url: string }[];
  /** Handed to the services after this one. */
  publish?: Record<string, string>;
  stop(): Promise<void>;
}

export interface Service {
  name: string;
  start(ctx: ServiceContext): Promise<RunningService>;
}
