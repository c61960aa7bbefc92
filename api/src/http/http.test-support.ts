// Test helpers for anything that serves routes: principals, a token -> principal authenticator, Deps
// over a test database, and an in-process API on a random port.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import pino from "pino";
import { buildApp } from "../app.ts";
import { buildDeps, type DepsParts } from "../buildDeps.ts";
import type { Clock } from "../clock.ts";
import { testConfig } from "../config.test-support.ts";
import type { Config } from "../config.ts";
import type { Db } from "../db/knex.ts";
import type { Deps } from "../deps.ts";
import type { Principal } from "../domain/identity/principal.ts";
import { TokenExpired, Unauthorized } from "../errors.ts";
import { createMetrics } from "./metrics.ts";
import type { Authenticator } from "./principal.ts";
import type { RouteDef } from "./route.ts";

let n = 0;
/** A principal; override what the test is about. */
export function aPrincipal(overrides: Partial<Principal> = {}): Principal {
  n += 1;
  return {
    userId: `usr_test${n}`,
    email: `user${n}@example.test`,
    isSuperAdmin: false,
    mustChangePassword: false,
    memberships: [],
    ...overrides,
  };
}

/** Accepts exactly the given tokens; "expired" is always an expired token. */
export function fakeAuthenticator(tokens: Record<string, Principal>): Authenticator {
  return async (_ctx, token) => {
    if (token === "expired") throw new TokenExpired();
    const p = tokens[token];
    if (!p) throw new Unauthorized("the bearer token is not valid; sign in again");
    return p;
  };
}

/** A clock the test moves. */
export class TestClock implements Clock {
  #now: number;
  constructor(start = new Date("2026-11-22T12:00:00Z")) {
    this.#now = start.getTime();
  }
  now(): Date {
    return new Date(this.#now);
  }
  advance(seconds: number): void {
    this.#now += seconds * 1000;
  }
}

/** Deps for a test, made by the process's own composition root (buildDeps); parts override its defaults. */
export function testDeps(
  opts: { db: Db; config?: Config; clock?: Clock; authenticate?: Authenticator } & Omit<
    DepsParts,
    "db" | "log" | "clock" | "authenticate"
  >,
): Deps {
  const { config, authenticate, ...parts } = opts;
  return buildDeps(config ?? testConfig(), {
    log: pino({ level: "silent" }),
    clock: { now: () => new Date() },
    metrics: createMetrics({ defaultMetrics: false }),
    authenticate: authenticate ?? fakeAuthenticator({}),
    ...parts,
  });
}

export interface TestApi {
  url: string;
  deps: Deps;
  /** fetch against the test API: path relative to its root. */
  call(path: string, init?: RequestInit & { token?: string; json?: unknown }): Promise<Response>;
  stop(): Promise<void>;
}

/** Serves `routes` (default: the contract's) on a random local port with the given deps. */
export async function startTestApi(deps: Deps, routes?: readonly RouteDef[]): Promise<TestApi> {
  const server = createServer(buildApp(deps, routes ? { routes } : {}).callback());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    deps,
    call(path, init = {}) {
      const { token, json, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (token) headers.set("Authorization", `Bearer ${token}`);
      if (json !== undefined) headers.set("Content-Type", "application/json");
      return fetch(url + path, { ...rest, headers, ...(json !== undefined ? { body: JSON.stringify(json) } : {}) });
    },
    stop: async () => {
      // The event hub's streams end and its LISTEN connection goes back, or the pool could not close.
      await deps.events.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
