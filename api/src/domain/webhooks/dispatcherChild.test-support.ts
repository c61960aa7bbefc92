// A dispatcher in a process of its own, for the SIGKILL test (dispatcher.pg.test.ts): the database,
// the receiver's CA and the timings come from the environment. Prints "ready" once it runs.
import pino from "pino";
import { connect } from "../../db/knex.ts";
import { WebhookDispatcher } from "./dispatcher.ts";
import { parseSecretKeys, WebhookSecretBox } from "./secretBox.ts";
import { WebhookGuard } from "./ssrf.ts";

const env = process.env as Record<string, string>;
const db = connect(env.BERTH_HOOKS_DB as string, { poolMax: 4 });
const d = new WebhookDispatcher({
  db,
  log: pino({ level: "silent" }),
  guard: new WebhookGuard({ allowHosts: ["127.0.0.1"] }),
  ...(env.BERTH_HOOKS_SECRET_KEYS
    ? { secrets: new WebhookSecretBox(parseSecretKeys(env.BERTH_HOOKS_SECRET_KEYS)) }
    : {}),
  ca: env.BERTH_HOOKS_CA as string,
  timeoutMs: Number(env.BERTH_HOOKS_TIMEOUT_MS),
  leaseSlackMs: Number(env.BERTH_HOOKS_LEASE_SLACK_MS),
  retryScheduleMs: [0, 100, 100, 100],
  pollMs: 100,
});
d.start();
process.stdout.write("ready\n");
