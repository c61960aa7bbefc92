// Process entry: environment → configuration → operator; SIGTERM/SIGINT stop it gracefully (the lease is
// released, so a standby replica takes over at once). The only file that reads process.env.
import { hostname } from "node:os";
import { pino } from "pino";
import { ConfigError, configFromEnv } from "./config.ts";

let config: ReturnType<typeof configFromEnv>;
try {
  config = configFromEnv(process.env, process.env.POD_NAME ?? hostname());
} catch (e) {
  if (e instanceof ConfigError) {
    process.stderr.write(`${e.message}\n`);
    process.exit(2);
  }
  throw e;
}

const log = pino({ level: config.logLevel, base: { component: "operator" } });
// Loaded after the configuration is known good, so a bad one fails fast without loading the clients.
const { startOperator } = await import("./operator.ts");
const operator = await startOperator(config, { log });

let signalled = false;
for (const sig of ["SIGTERM", "SIGINT"] as const) {
  process.on(sig, () => {
    if (signalled) process.exit(1); // a second signal: give up on the graceful path
    signalled = true;
    log.info({ signal: sig }, "stopping");
    operator.stop().then(
      () => process.exit(0),
      (e: unknown) => {
        log.error({ error: e instanceof Error ? e.message : String(e) }, "stop failed");
        process.exit(1);
      },
    );
  });
}
