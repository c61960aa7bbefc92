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
const gateway = await runGateway(config, { log });

let signalled = false;
for (const sig of ["SIGTERM", "SIGINT"] as const) {
  process.on(sig, () => {
    if (signalled) process.exit(1);
    signalled = true;
    log.info({ signal: sig }, "stopping");
    gateway.close().then(
      () => process.exit(0),
      (e: unknown) => {
        log.error({ err: e }, "stop failed");
        process.exit(1);
      },
    );
  });
}
