// The dispatcher: takes due deliveries from the outbox (claimDeliveries), signs and sends them, and
// settles each with its attempt in the delivery log (finishDelivery). At-least-once: a dispatcher killed
// mid-delivery leaves its claim to lapse (lease), and the next one sends the same webhook-id again.
// Woken at commit by NOTIFY berth_webhook_outbox; a poll covers a lost notification and retries coming due.
import type { Knex } from "knex";
import type { Logger } from "pino";
import { claimDeliveries } from "../../db/operations/webhooks/claimDeliveries.ts";
import { finishDelivery } from "../../db/operations/webhooks/finishDelivery.ts";
import { purgeWebhookLog } from "../../db/operations/webhooks/purgeWebhookLog.ts";
import type { ClaimedDelivery } from "../../db/operations/webhooks/types.ts";
import { isDomainError } from "../../errors.ts";
import { resealSecrets } from "./reseal.ts";
import { DEFAULT_RETRY_SCHEDULE_MS, nextDelayMs, parseRetryAfter } from "./retry.ts";
import { SecretUnreadable, WebhookSecretBox } from "./secretBox.ts";
import { send, TargetAgents } from "./send.ts";
import { signatureHeaders } from "./signing.ts";
import type { WebhookGuard } from "./ssrf.ts";

export interface DispatcherOptions {
  db: Knex;
  log: Logger;
  guard: WebhookGuard;
  /** Opens the endpoints' sealed secrets to sign (secretBox.ts) and re-seals them under its first key
   * (hourly). Default: no key (only secrets stored unsealed open). */
  secrets?: WebhookSecretBox;
  clock?: { now(): Date };
  /** Per attempt (the issue: 15 s). */
  timeoutMs?: number;
  retryScheduleMs?: readonly number[];
  /** Deliveries in flight per endpoint (default 4; a session's events stay in order regardless). */
  perEndpoint?: number;
  /** Deliveries in flight in this process (default 64). */
  concurrency?: number;
  /** How long a claim holds beyond the timeout before another dispatcher may take it (default 15 s). */
  leaseSlackMs?: number;
  pollMs?: number;
  /** An endpoint failing for this long is disabled (default 5 days). */
  disableAfterFailingMs?: number;
  /** Delivery log retention (default 30 days). */
  retentionMs?: number;
  /** Extra trusted CA certificates (PEM) for receivers with a private CA. */
  ca?: string;
}

type PgConnection = {
  query(sql: string): Promise<unknown>;
  on(e: "notification" | "error", f: (...a: unknown[]) => void): void;
  removeAllListeners(e: string): void;
};

export class WebhookDispatcher {
  readonly #o: Required<Omit<DispatcherOptions, "ca" | "clock">> & { ca?: string; clock: { now(): Date } };
  #running = false;
  #inFlight = new Set<Promise<void>>();
  #wake: (() => void) | undefined;
  #woken = false;
  #loop: Promise<void> | undefined;
  #listen: PgConnection | undefined;
  #lastPurge = 0;
  readonly #agents: TargetAgents;

  constructor(o: DispatcherOptions) {
    this.#o = {
      timeoutMs: 15_000,
      retryScheduleMs: DEFAULT_RETRY_SCHEDULE_MS,
      perEndpoint: 4,
      concurrency: 64,
      leaseSlackMs: 15_000,
      pollMs: 1_000,
      disableAfterFailingMs: 5 * 86_400_000,
      retentionMs: 30 * 86_400_000,
      clock: { now: () => new Date() },
      secrets: new WebhookSecretBox([]),
      ...o,
    };
    // Several endpoints may share a receiver: the claims bound each endpoint, the pool only the process.
    this.#agents = new TargetAgents({ socketsPerTarget: this.#o.concurrency });
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loop = this.#run();
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.#wake?.();
    await this.#loop;
    await Promise.allSettled([...this.#inFlight]);
    await this.#unlisten();
    this.#agents.destroy();
  }

  /** One pass: claims what is due and sends it; resolves when those attempts are settled. Answers how many. */
  async runOnce(): Promise<number> {
    const free = this.#o.concurrency - this.#inFlight.size;
    if (free <= 0) return 0;
    const leaseMs = this.#o.timeoutMs + this.#o.leaseSlackMs;
    // Taken before the claim: the claim holds at least until then (its lease counts from the database's now).
    const holdsUntil = Date.now() + leaseMs;
    const claimed = await claimDeliveries(this.#o.db, { limit: free, perEndpoint: this.#o.perEndpoint, leaseMs });
    for (const d of claimed) {
      const p = this.#deliver(d, holdsUntil)
        .catch((err: unknown) => this.#o.log.error({ err, delivery: d.id }, "webhook delivery could not be settled"))
        .finally(() => {
          this.#inFlight.delete(p);
          this.#wake?.(); // a slot freed, and the next of its ordering key may be due
        });
      this.#inFlight.add(p);
    }
    return claimed.length;
  }

  async #run(): Promise<void> {
    while (this.#running) {
      try {
        await this.#ensureListening();
        this.#woken = false;
        const n = await this.runOnce();
        await this.#purgeNow();
        if (n > 0 || this.#woken) continue;
      } catch (err) {
        this.#o.log.warn({ err: String(err) }, "webhook dispatcher pass failed; retrying");
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, this.#o.pollMs);
        this.#wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.#wake = undefined;
    }
  }

  async #ensureListening(): Promise<void> {
    if (this.#listen) return;
    const conn = (await this.#o.db.client.acquireConnection()) as PgConnection;
    conn.on("notification", () => {
      this.#woken = true;
      this.#wake?.();
    });
    conn.on("error", () => {
      // Polling goes on; the next pass listens again on a fresh connection.
      if (this.#listen === conn) this.#listen = undefined;
      conn.removeAllListeners("notification");
      void this.#o.db.client.releaseConnection(conn).catch(() => {});
    });
    await conn.query("LISTEN berth_webhook_outbox");
    this.#listen = conn;
  }

  async #unlisten(): Promise<void> {
    const c = this.#listen;
    this.#listen = undefined;
    if (!c) return;
    c.removeAllListeners("notification");
    await c.query("UNLISTEN berth_webhook_outbox").catch(() => {});
    await this.#o.db.client.releaseConnection(c).catch(() => {});
  }

  async #purgeNow(): Promise<void> {
    const now = Date.now();
    if (now - this.#lastPurge < 3_600_000) return;
    this.#lastPurge = now;
    await purgeWebhookLog(this.#o.db, new Date(this.#o.clock.now().getTime() - this.#o.retentionMs));
    const r = await resealSecrets(this.#o.db, this.#o.secrets);
    if (r.resealed > 0 || r.unreadable > 0) this.#o.log.info(r, "webhook secrets sealed again under the current key");
    if (r.unreadable > 0)
      this.#o.log.error({ unreadable: r.unreadable }, "webhook secrets sealed with a key this worker does not have");
  }

  async #deliver(d: ClaimedDelivery, holdsUntil: number): Promise<void> {
    const at = this.#o.clock.now();
    const body = JSON.stringify(d.payload);
    let result: {
      statusCode: number | null;
      body: string | null;
      error: string | null;
      retryAfter?: string | undefined;
      latencyMs: number;
    };
    try {
      const secrets = [this.#o.secrets.open(d.secret, d.endpoint_id)];
      if (d.previous_secret && d.previous_secret_expires_at && d.previous_secret_expires_at > at) {
        secrets.push(this.#o.secrets.open(d.previous_secret, d.endpoint_id));
      }
      const headers = signatureHeaders(secrets, d.event_id, Math.floor(at.getTime() / 1000), body);
      const target = await this.#o.guard.check(d.url); // again at every delivery: DNS may have changed
      result = await send(target, headers, body, {
        timeoutMs: this.#o.timeoutMs,
        ca: this.#o.ca,
        agent: this.#agents.for(target, this.#o.ca),
      });
    } catch (err) {
      if (err instanceof SecretUnreadable)
        result = { statusCode: null, body: null, error: `secret_unreadable: ${err.message}`, latencyMs: 0 };
      else if (isDomainError(err))
        result = { statusCode: null, body: null, error: `${err.code}: ${err.message}`, latencyMs: 0 };
      else throw err;
    }
    const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    const gone = result.statusCode === 410;
    const retryInMs =
      ok || gone ? null : nextDelayMs(this.#o.retryScheduleMs, d.attempts, parseRetryAfter(result.retryAfter, at));
    let disable: "gone" | "failing" | null = gone ? "gone" : null;
    if (!ok && !gone) {
      const since = await this.#o.db("webhook_endpoints").where({ id: d.endpoint_id }).first("failing_since");
      const failingSince = (since as { failing_since: Date | null } | undefined)?.failing_since;
      if (failingSince && at.getTime() - failingSince.getTime() >= this.#o.disableAfterFailingMs) disable = "failing";
    }
    const error =
      result.error ??
      (ok
        ? null
        : result.statusCode !== null && result.statusCode >= 300 && result.statusCode < 400
          ? `redirect (${result.statusCode}) not followed`
          : `HTTP ${result.statusCode}`);
    await this.#settle(holdsUntil, {
      deliveryId: d.id,
      endpointId: d.endpoint_id,
      eventId: d.event_id,
      attempt: d.attempts,
      at,
      ok,
      statusCode: result.statusCode,
      responseBody: result.body,
      error,
      latencyMs: result.latencyMs,
      retryInMs: gone ? null : retryInMs,
      disable,
    });
    this.#o.log.debug(
      { delivery: d.id, event: d.event_id, endpoint: d.endpoint_id, status: result.statusCode, ok },
      "webhook attempt",
    );
  }

  /**
   * Records the attempt, tried again while the claim holds: an attempt the receiver took but the database
   * did not hear of (Postgres restarting) is sent again once the claim lapses, so the retry spares the
   * receiver a duplicate whenever the database is back within the lease. Past it, another dispatcher may
   * have sent it again (finishDelivery then settles nothing).
   */
  async #settle(holdsUntil: number, outcome: Parameters<typeof finishDelivery>[1]): Promise<void> {
    for (let wait = 250; ; wait = Math.min(wait * 2, 4_000)) {
      try {
        await finishDelivery(this.#o.db, outcome);
        return;
      } catch (err) {
        if (!this.#running || Date.now() + wait >= holdsUntil) throw err;
        this.#o.log.warn(
          { err: String(err), delivery: outcome.deliveryId },
          "settling a webhook attempt failed; retrying",
        );
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }
}
