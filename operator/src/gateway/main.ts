// Process entry of the session gateway (one per GPU cluster): environment -> configuration -> gateway.
// The only gateway file that reads process.env. `node operator/src/gateway/main.ts`
import { pino } from "pino";
import { GatewayConfigError, gatewayConfigFromEnv } from "./config.ts";
import { runGateway } from "./run.ts";

let config: ReturnType<typeof gatewayConfigFromEnv>;
try {
  config = gatewayConfigFromEnv(process.env);
} catch (e) {
  if (e instanceof GatewayConfigError) {
    process.stderr.write(`${e.message}\n`);
    process.exit(2);
  }
  throw e;
}

const log = pino({ level: config.logLevel, base: { component: "gateway", cluster: config.clusterId } });
const gateway = runGateway(config, { log });

// Handlers before the gateway is up: a SIGTERM during start-up (workers being forked, a certificate being
// made) stops it once it is up, workers included, instead of the default action killing this process alone.
let signalled = false;
for (const sig of ["SIGTERM", "SIGINT"] as const) {
  process.on(sig, () => {
    if (signalled) process.exit(1);
    signalled = true;
    log.info({ signal: sig }, "stopping");
    gateway
      .then((g) => g.close())
      .then(
        () => process.exit(0),
        (e: unknown) => {
          log.error({ err: e }, "stop failed");
          process.exit(1);
        },
      );
  });
}

await gateway;
