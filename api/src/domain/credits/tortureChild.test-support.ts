// A real API process for the SIGKILL torture test (torture.pg.test.ts): the internal listener with the
// whole usage path (operator token, ownership check, store, billing pass), on the database and port the
// test gives, verifying operator tokens with the key the test signs them with. Prints "ready <url>".
import { readFileSync } from "node:fs";
import pino from "pino";
import { connect } from "../../db/knex.ts";
import { testDeps } from "../../http/http.test-support.ts";
import { startInternalListener } from "../../internal/app.ts";
import { OperatorTokens } from "../clusters/operatorToken.ts";
import type { ClustersRuntime } from "../clusters/runtime.ts";
import { signingKeyFromPem } from "../clusters/signingKey.ts";

const env = process.env as Record<string, string>;
const db = connect(env.BERTH_TORTURE_DB as string, { poolMax: 10 });
const clock = { now: () => new Date() };
const tokens = new OperatorTokens({
  key: await signingKeyFromPem(readFileSync(env.BERTH_TORTURE_KEY as string, "utf8")),
  clock,
});
const deps = {
  ...testDeps({ db }),
  log: pino({ level: "silent" }),
  clusters: { tokens } as unknown as ClustersRuntime,
};
const plane = await startInternalListener(deps, {
  allowCidrs: ["127.0.0.0/8"],
  host: "127.0.0.1",
  port: Number(env.BERTH_TORTURE_PORT),
});
if (!plane) throw new Error("the internal plane did not open");
process.stdout.write(`ready ${plane.url}\n`);
