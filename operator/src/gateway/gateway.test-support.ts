// Test support for the gateway: an in-memory verifier that behaves like the control plane's verify route,
// a tiny HTTPS client that trusts a given certificate, and a real gateway with no sessions behind it.
import { mkdtemp, writeFile } from "node:fs/promises";
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gatewayConfigFromEnv } from "./config.ts";
import { runGateway } from "./run.ts";
import type { ServingGateway } from "./serving.ts";
import type { ConnectVerifier, Grant, VerifyOutcome } from "./verifier.ts";

/** A real gateway on loopback (ports picked by the kernel) whose every route leads nowhere: for its status port. */
export async function aStandaloneGateway(clusterId: string, workers: number): Promise<ServingGateway> {
  const dir = await mkdtemp(join(tmpdir(), "berth-gw-"));
  await writeFile(join(dir, "token"), "t\n");
  return runGateway(
    gatewayConfigFromEnv({
      BERTH_GATEWAY_CLUSTER_ID: clusterId,
      BERTH_GATEWAY_CONTROL_PLANE_URL: "http://127.0.0.1:9",
      BERTH_GATEWAY_TOKEN_FILE: join(dir, "token"),
      BERTH_GATEWAY_HOST: "127.0.0.1",
      BERTH_GATEWAY_PORT: "0",
      BERTH_GATEWAY_STATUS_HOST: "127.0.0.1",
      BERTH_GATEWAY_STATUS_PORT: "0",
      BERTH_GATEWAY_STATIC_UPSTREAMS: "*=127.0.0.1:9",
      BERTH_GATEWAY_LOG_LEVEL: "silent",
    }),
    { workers },
  );
}

export interface FakeSession {
  sessionId: string;
  cr: string;
  clusterId: string;
  ownerId: string;
  phase: string;
}

export class FakeVerifier implements ConnectVerifier {
  readonly sessions = new Map<string, FakeSession>();
  readonly tokens = new Map<string, { sessionId: string; userId: string; used: boolean; expired?: boolean }>();
  /** When set, every call answers "unavailable" with this reason. */
  down: string | undefined;
  calls = { redeem: 0, check: 0 };

  session(s: FakeSession): this {
    this.sessions.set(s.sessionId, s);
    return this;
  }
  issue(token: string, sessionId: string, userId: string, over: { expired?: boolean } = {}): string {
    this.tokens.set(token, { sessionId, userId, used: false, ...over });
    return token;
  }
  #grant(s: FakeSession, userId: string): VerifyOutcome {
    if (s.phase !== "Running")
      return {
        kind: "refused",
        refusal: { code: "conflict", reason: "session_not_running", phase: s.phase, message: `session is ${s.phase}` },
      };
    const grant: Grant = { sessionId: s.sessionId, crName: s.cr, clusterId: s.clusterId, userId, phase: s.phase };
    return { kind: "grant", grant };
  }
  async redeem({ cr, token }: { cr: string; token: string }): Promise<VerifyOutcome> {
    this.calls.redeem++;
    if (this.down) return { kind: "unavailable", why: this.down };
    const t = this.tokens.get(token);
    const refuse = (reason: string): VerifyOutcome => ({
      kind: "refused",
      refusal: { code: "forbidden", reason, message: reason.replace("_", " ") },
    });
    if (!t) return refuse("token_unknown");
    const s = this.sessions.get(t.sessionId);
    if (!s) return { kind: "refused", refusal: { code: "not_found", reason: "session_gone", message: "gone" } };
    if (s.cr !== cr) return refuse("other_session");
    if (t.used) return refuse("token_used");
    if (t.expired) return refuse("token_expired");
    t.used = true;
    return this.#grant(s, t.userId);
  }
  async check({ cr, sessionId, userId }: { cr: string; sessionId: string; userId: string }): Promise<VerifyOutcome> {
    this.calls.check++;
    if (this.down) return { kind: "unavailable", why: this.down };
    const s = this.sessions.get(sessionId);
    if (!s) return { kind: "refused", refusal: { code: "not_found", reason: "session_gone", message: "gone" } };
    if (s.cr !== cr)
      return { kind: "refused", refusal: { code: "forbidden", reason: "other_session", message: "other session" } };
    if (s.ownerId !== userId)
      return { kind: "refused", refusal: { code: "forbidden", reason: "not_allowed", message: "not allowed" } };
    return this.#grant(s, userId);
  }
}

export interface SimpleResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One request; `ca` trusts a self-signed gateway. No redirects are followed. */
export function get(
  url: string,
  o: { headers?: Record<string, string>; ca?: string; method?: string; body?: string } = {},
): Promise<SimpleResponse> {
  const u = new URL(url);
  const fn = u.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const r = fn(
      u,
      { method: o.method ?? "GET", headers: o.headers, ...(o.ca ? { ca: o.ca } : {}), agent: false },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on("error", reject);
      },
    );
    r.on("error", reject);
    r.end(o.body);
  });
}

/** The `name=value` part of the first Set-Cookie for `name`. */
export function cookieFrom(res: SimpleResponse, name = "berth_cnx"): string | undefined {
  const all = res.headers["set-cookie"] ?? [];
  const hit = all.find((c) => c.startsWith(`${name}=`));
  return hit?.split(";")[0];
}
