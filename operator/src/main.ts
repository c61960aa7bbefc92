// Process entry: environment → configuration → operator; SIGTERM/SIGINT stop it gracefully (the lease is
// released, so a standby replica takes over at once). The only file that reads process.env.
import { hostname } from "node:os";
import { configOrExit, runMain, stopOnSignals } from "@berth/controllers";
import { pino } from "pino";
import { ConfigError, configFromEnv } from "./config.ts";

async function main(): Promise<void> {
  const config = configOrExit(() => configFromEnv(process.env, process.env.POD_NAME ?? hostname()), ConfigError);
  const log = pino({ level: config.logLevel, base: { component: "operator" } });
  // Loaded after the configuration is known good, so a bad one fails fast without loading the clients.
  const { startOperator } = await import("./operator.ts");
  const operator = await startOperator(config, { log });
  stopOnSignals(log, () => operator.stop());
}

runMain("berth-operator", main);
