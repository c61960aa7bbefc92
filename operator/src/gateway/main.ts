// Process entry of the session gateway (one per GPU cluster): environment -> configuration -> gateway.
// The only gateway file that reads process.env. `node operator/src/gateway/main.ts`
import { configOrExit, runMain, stopOnSignals } from "@berth/controllers";
import { pino } from "pino";
import { GatewayConfigError, gatewayConfigFromEnv } from "./config.ts";
import { runGateway } from "./run.ts";

async function main(): Promise<void> {
  const config = configOrExit(() => gatewayConfigFromEnv(process.env), GatewayConfigError);
  const log = pino({ level: config.logLevel, base: { component: "gateway", cluster: config.clusterId } });
  const gateway = runGateway(config, { log });
  // Handlers before the gateway is up: a SIGTERM during start-up (workers being forked, a certificate being
  // made) stops it once it is up, workers included, instead of the default action killing this process alone.
  stopOnSignals(log, () => gateway.then((g) => g.close()));
  await gateway;
}

runMain("berth-gateway", main);
