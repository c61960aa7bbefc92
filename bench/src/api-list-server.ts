// One server of the api-list bench, in its own process so autocannon never shares its event loop.
//   node bench/src/api-list-server.ts api|baseline|baseline-full   (env: DATABASE_URL, BERTH_JWT_SECRET, BENCH_USER_ID)
// Prints its URL on the first line of stdout; stops on SIGTERM.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { connect, parseConfig, startApi } from "@berth/api";
import { AccessTokens } from "@berth/api/testing";
import Koa from "koa";

const mode = process.argv[2];
const env = { ...process.env, BERTH_API_HOST: "127.0.0.1", BERTH_API_PORT: "0", BERTH_LOG_LEVEL: "warn" };
const config = parseConfig(env);

if (mode === "api") {
  const api = await startApi({ config, migrate: false, startupTasks: [] });
  process.stdout.write(`${api.url}\n`);
  process.once("SIGTERM", () => void api.stop().then(() => process.exit(0)));
} else if (mode === "baseline" || mode === "baseline-full") {
  // Bare Koa + the same JWT verification (AccessTokens: jose HS256, same claims checks, the same cache of
  // verified tokens) + one point read. "baseline-full" verifies the signature on every request (a fresh
  // AccessTokens, so an empty cache): what the cache saves.
  const db = connect(config.database.url.reveal(), { poolMax: config.database.poolMax });
  const tokens = new AccessTokens({
    secret: config.auth.jwtSecret.reveal(),
    ttlSeconds: config.auth.accessTokenTtlSeconds,
  });
  const app = new Koa();
  let running = 0;
  app.use(async (ctx) => {
    running += 1;
    try {
      await handle(ctx);
    } finally {
      running -= 1;
    }
  });
  const handle = async (ctx: Koa.Context) => {
    const bearer = /^Bearer (.+)$/.exec(ctx.get("Authorization"))?.[1];
    if (!bearer) {
      ctx.status = 401;
      return;
    }
    const verifier = mode === "baseline" ? tokens : new AccessTokens({ secret: config.auth.jwtSecret.reveal() });
    const claims = await verifier.verify(bearer);
    const row = await db("users").where({ id: claims.userId }).first("id", "email");
    ctx.body = { data: [row], pagination: { page: 1, size: 20, total: 1 } };
  };
  const server = createServer(app.callback());
  server.listen(0, "127.0.0.1", () =>
    process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`),
  );
  process.once("SIGTERM", () => {
    server.close(async () => {
      while (running > 0) await new Promise((r) => setTimeout(r, 20));
      await db.destroy();
      process.exit(0);
    });
    server.closeIdleConnections();
  });
} else {
  process.stderr.write("usage: api-list-server.ts api|baseline|baseline-full\n");
  process.exit(2);
}
