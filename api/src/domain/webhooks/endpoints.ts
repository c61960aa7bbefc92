// Webhook endpoints: create (the secret is answered once), list, read, change, rotate the secret, delete.
// The URL is checked by the SSRF guard (ssrf.ts) at creation and on every change of it.
import { randomBytes } from "node:crypto";
import { countEndpointsLocked } from "../../db/operations/webhooks/countEndpoints.ts";
import { deleteEndpoint } from "../../db/operations/webhooks/deleteEndpoint.ts";
import { insertEndpoint } from "../../db/operations/webhooks/insertEndpoint.ts";
import { endpointsQuery } from "../../db/operations/webhooks/listEndpoints.ts";
import type { WebhookEndpointRow } from "../../db/operations/webhooks/types.ts";
import { type EndpointChanges, updateEndpoint } from "../../db/operations/webhooks/updateEndpoint.ts";
import { type PagedBody, paginate } from "../../db/paging.ts";
import type { Deps } from "../../deps.ts";
import { DomainError, Invalid, NotFound } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { scopeOf } from "../identity/scope.ts";
import { assertAdmins, endpointFor } from "./access.ts";
import { newWebhookSecret } from "./signing.ts";

type D = Pick<Deps, "db" | "clock" | "webhooks">;

export const MAX_ENDPOINTS_PER_ORGANIZATION = 10;
/** How long the old secret keeps signing after a rotation unless asked otherwise. */
export const DEFAULT_ROTATION_OVERLAP_SECONDS = 24 * 3600;

export function newEndpointId(): string {
  const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz";
  let s = "";
  while (s.length < 20) for (const b of randomBytes(20)) if (b < 252 && s.length < 20) s += alphabet[b % 36];
  return `whk_${s}`;
}

/** The organization a create is for: the one named, or the caller's only administered one. */
function organizationOf(p: Principal, organizationId: string | undefined): string {
  if (organizationId !== undefined) return organizationId;
  const admin = [...scopeOf(p).adminOrganizations];
  if (admin.length === 1) return admin[0] as string;
  throw new Invalid("organization_id is required: say which organization the endpoint is for", [
    {
      path: ["body", "organization_id"],
      message: "required unless you administer exactly one organization",
      code: "required",
    },
  ]);
}

/** An endpoint as stored (its secret sealed) and, for the one answer that shows it, the secret itself. */
export interface EndpointWithSecret {
  endpoint: WebhookEndpointRow;
  secret: string;
}

export async function createEndpoint(
  deps: D,
  p: Principal,
  input: { organizationId?: string | undefined; url: string; description?: string | undefined; eventTypes: string[] },
): Promise<EndpointWithSecret> {
  const organizationId = organizationOf(p, input.organizationId);
  assertAdmins(p, organizationId);
  await deps.webhooks.guard.check(input.url);
  return deps.db.transaction(async (trx) => {
    const n = await countEndpointsLocked(trx, organizationId);
    if (n >= MAX_ENDPOINTS_PER_ORGANIZATION) {
      throw new DomainError(
        "webhook_limit_reached",
        `an organization may have at most ${MAX_ENDPOINTS_PER_ORGANIZATION} webhook endpoints; delete one first`,
        { limit: MAX_ENDPOINTS_PER_ORGANIZATION, current: n },
      );
    }
    const id = newEndpointId();
    const secret = newWebhookSecret();
    const endpoint = await insertEndpoint(trx, {
      id,
      organizationId,
      url: input.url,
      description: input.description ?? "",
      eventTypes: [...new Set(input.eventTypes)].sort(),
      secret: deps.webhooks.secrets.seal(secret, id),
      createdBy: p.userId,
      at: deps.clock.now(),
    });
    return { endpoint, secret };
  });
}

export async function listEndpoints(
  deps: D,
  p: Principal,
  q: { page: number; size: number; organizationId?: string | undefined },
): Promise<PagedBody<WebhookEndpointRow>> {
  const s = scopeOf(p);
  return paginate(
    deps.db,
    endpointsQuery(deps.db, s.all ? "all" : [...s.adminOrganizations], q.organizationId),
    q,
    (r: WebhookEndpointRow) => r,
  );
}

export const getEndpoint = (deps: D, p: Principal, id: string) => endpointFor(deps, p, id);

export async function changeEndpoint(
  deps: D,
  p: Principal,
  id: string,
  input: {
    url?: string | undefined;
    description?: string | undefined;
    eventTypes?: string[] | undefined;
    enabled?: boolean | undefined;
  },
): Promise<WebhookEndpointRow> {
  const e = await endpointFor(deps, p, id);
  const now = deps.clock.now();
  const changes: EndpointChanges = {};
  if (input.url !== undefined && input.url !== e.url) {
    await deps.webhooks.guard.check(input.url);
    changes.url = input.url;
  }
  if (input.description !== undefined) changes.description = input.description;
  if (input.eventTypes !== undefined) changes.event_types = [...new Set(input.eventTypes)].sort();
  if (input.enabled !== undefined && input.enabled !== e.enabled) {
    changes.enabled = input.enabled;
    changes.disabled_reason = input.enabled ? null : "manual";
    changes.disabled_at = input.enabled ? null : now;
    if (input.enabled) changes.failing_since = null; // a fresh start: the 5-day clock restarts
  }
  const row = await updateEndpoint(deps.db, id, changes, now);
  if (!row) throw new NotFound("webhook", id);
  return row;
}

export async function rotateSecret(
  deps: D,
  p: Principal,
  id: string,
  overlapSeconds = DEFAULT_ROTATION_OVERLAP_SECONDS,
): Promise<EndpointWithSecret> {
  const e = await endpointFor(deps, p, id);
  const now = deps.clock.now();
  const secret = newWebhookSecret();
  const row = await updateEndpoint(
    deps.db,
    id,
    {
      // The old value moves as it is stored: sealed for this same endpoint, it still opens.
      secret: deps.webhooks.secrets.seal(secret, id),
      previous_secret: overlapSeconds > 0 ? e.secret : null,
      previous_secret_expires_at: overlapSeconds > 0 ? new Date(now.getTime() + overlapSeconds * 1000) : null,
    },
    now,
  );
  if (!row) throw new NotFound("webhook", id);
  return { endpoint: row, secret };
}

export async function removeEndpoint(deps: D, p: Principal, id: string): Promise<WebhookEndpointRow> {
  const e = await endpointFor(deps, p, id);
  await deleteEndpoint(deps.db, id);
  return e;
}
