// Creates of one organization go through its door in batches. The door (checkQuota.ts) must be passed
// one request at a time per organization: colleagues share GPU limits, wallets and a budget, so the
// organization's lock is held from the reads to the insert. Taken once per create, that lock made every
// create of an organization wait for all the ones before it, each re-reading the minimum runs owed to
// every live session of the organization (a thousand live sessions: a thousand rows per create).
//
// Here the creates that arrive while a batch holds the door wait together and go in as the next batch:
// one transaction takes their owners' locks and the organization's, reads the tallies and the door once,
// decides each request in arrival order as if they came one after the other (each admitted one counts
// before the next is decided), and inserts the admitted ones in one statement. Refusals are per request;
// a batch whose transaction fails writes nothing and is decided again request by request (settle).
//
// Per process: API replicas each batch their own creates and still meet at the organization's lock.

import type { CapacityClass, ResourcePolicy } from "@berth/crds";
import type { Knex } from "knex";
import { countLiveForOwners, lockOwners, type OwnerTally } from "../../db/operations/sessions/countLiveForOwner.ts";
import { insertSessions, type NewSessionRow } from "../../db/operations/sessions/insertSession.ts";
import { lockOrganizationDoor } from "../../db/operations/sessions/lockOrganization.ts";
import type { SessionRow } from "../../db/operations/sessions/types.ts";
import { DEADLOCK_DETECTED, SERIALIZATION_FAILURE, sqlState } from "../../db/sqlstate.ts";
import { isDatabaseUnreachable } from "../../db/unreachable.ts";
import type { Deps } from "../../deps.ts";
import { isDomainError, Unavailable } from "../../errors.ts";
import { openDoor } from "../credits/door.ts";
import { type ClassScope, liveGpusOfClass } from "./capacityClass.ts";
import {
  classRefusal,
  doorRequest,
  type GpuScope,
  liveGpusOf,
  occupancyOf,
  ownerRefusalGiven,
  type QuotaRequest,
  sharedGpuRefusal,
} from "./checkQuota.ts";
import { sessionsRuntimeOf } from "./runtime.ts";

/** Most creates decided under one hold of an organization's door. */
export const MAX_BATCH = 64;
/** Most creates of one organization waiting in one process; beyond, a create is answered 503 at once. */
export const MAX_WAITING = 5_000;

interface Waiting {
  req: QuotaRequest;
  row: NewSessionRow;
  resolve: (row: SessionRow) => void;
  reject: (e: unknown) => void;
}

/**
 * Lets one create through its organization's door: resolves with the inserted row, or rejects with the
 * door's refusal (QuotaExceeded) or the failure of its transaction.
 */
export function admitCreate(deps: Deps, req: QuotaRequest, row: NewSessionRow): Promise<SessionRow> {
  // The queues hold only this file's Waiting entries (admissionQueues.ts cannot name the type).
  const byOrg = deps.admission.byOrganization as Map<string, Waiting[]>;
  const queue = byOrg.get(req.organizationId);
  if (queue && queue.length >= MAX_WAITING)
    return Promise.reject(
      new Unavailable(
        "too many sessions are being created in this organization at once; retry shortly",
        { waiting: queue.length },
        { "Retry-After": "1" },
      ),
    );
  return new Promise<SessionRow>((resolve, reject) => {
    const w = { req, row, resolve, reject };
    if (queue) {
      queue.push(w);
      return;
    }
    // No batch in flight for this organization: this one starts the loop, which runs until no one waits.
    const mine: Waiting[] = [w];
    byOrg.set(req.organizationId, mine);
    void drain(deps, byOrg, req.organizationId, mine);
  });
}

async function drain(deps: Deps, byOrg: Map<string, Waiting[]>, organizationId: string, queue: Waiting[]) {
  let batch: Waiting[] = [];
  try {
    // The first batch starts at once; later ones take whoever arrived while the previous one ran.
    while (queue.length > 0) {
      batch = queue.splice(0, MAX_BATCH);
      await settle(deps, batch);
    }
  } catch (e) {
    // settle answers every request it takes; this is for a bug in it: nobody may wait forever (a promise
    // already settled ignores the second answer).
    for (const w of [...batch, ...queue.splice(0)]) w.reject(e);
  } finally {
    byOrg.delete(organizationId);
  }
}

/**
 * Decides a batch and answers each of its requests. A deadlock or serialization failure is tried once
 * more. A failure that one request's row can cause is decided again one request at a time, so that it
 * is answered only to that request; a shared one (the catalog or the database unavailable) is answered
 * to all at once, not waited out once per request while the organization's line grows.
 */
async function settle(deps: Deps, batch: Waiting[], retried = false): Promise<void> {
  deps.metrics.sessionAdmissionBatch.observe(batch.length);
  let outcomes: (SessionRow | Error)[];
  try {
    // Read before the transaction: no connection or lock is held over a call to the management cluster
    // (cached for seconds; the create itself has just read it).
    const policies = await sessionsRuntimeOf(deps).catalog.policies();
    outcomes = await deps.db.transaction((tx) => decideBatch(deps, tx, policies, batch));
  } catch (e) {
    const state = sqlState(e);
    const contended = state === DEADLOCK_DETECTED || state === SERIALIZATION_FAILURE;
    if (contended && !retried) return settle(deps, batch, true);
    if (batch.length > 1 && mayBelongToOneRequest(e)) {
      for (const w of batch) await settle(deps, [w], true);
      return;
    }
    const answer = contended
      ? new Unavailable("the database was too busy to decide this create; retry", {}, { "Retry-After": "1" })
      : e;
    for (const w of batch) w.reject(answer);
    return;
  }
  for (const [i, w] of batch.entries()) {
    const o = outcomes[i] as SessionRow | Error;
    if (o instanceof Error) w.reject(o);
    else w.resolve(o);
  }
}

/** Bad data or a violated constraint (SQLSTATE classes 22, 23), or a bug: maybe one request's doing. */
function mayBelongToOneRequest(e: unknown): boolean {
  if (isDomainError(e) || isDatabaseUnreachable(e)) return false;
  const state = sqlState(e);
  if (state === undefined) return true;
  return state.startsWith("22") || state.startsWith("23");
}

/** One batch in its transaction: per request, the inserted row or the refusal. */
async function decideBatch(
  deps: Deps,
  tx: Knex.Transaction,
  policies: readonly ResourcePolicy[],
  batch: readonly Waiting[],
): Promise<(SessionRow | Error)[]> {
  const organizationId = (batch[0] as Waiting).req.organizationId;
  const owners = [...new Set(batch.map((w) => w.req.ownerId))];
  await lockOwners(tx, owners);
  const tallies = await countLiveForOwners(tx, owners);
  const tallyOf = (ownerId: string): OwnerTally => tallies.get(ownerId) ?? { sessions: 0, gpus: 0 };

  await lockOrganizationDoor(tx, organizationId);
  // GPUs held per project and organization: read once when a limit asks, plus what this batch admitted.
  const read = new Map<string, Promise<number>>();
  const added = new Map<string, number>();
  const keyOf = (scope: GpuScope) => `${scope.column}:${scope.id}`;
  const heldOf = async (scope: GpuScope) => {
    const key = keyOf(scope);
    let v = read.get(key);
    if (!v) {
      v = liveGpusOf(tx, scope);
      read.set(key, v);
    }
    return (await v) + (added.get(key) ?? 0);
  };
  const door = await openDoor(deps.credits, tx, organizationId);
  // GPUs of a model and class held per scope (guarantees, borrowing limits), read when asked, plus this batch's.
  const classRead = new Map<string, Promise<number>>();
  const classAdded = new Map<string, number>();
  const classKey = (scope: ClassScope, model: string, cls: string) => `${scope.column}:${scope.id}:${model}:${cls}`;
  const classHeldOf = (model: string) => async (scope: ClassScope, cls: CapacityClass) => {
    const key = classKey(scope, model, cls);
    let v = classRead.get(key);
    if (!v) {
      v = liveGpusOfClass(tx, scope, model, cls);
      classRead.set(key, v);
    }
    return (await v) + (classAdded.get(key) ?? 0);
  };

  const outcomes: (NewSessionRow | Error)[] = [];
  for (const { req, row } of batch) {
    const refusal =
      (await ownerRefusalGiven(policies, req, () => tallyOf(req.ownerId))) ??
      (await sharedGpuRefusal(policies, req, heldOf)) ??
      (await classRefusal(policies, req, classHeldOf(req.offering.spec.gpuModel))) ??
      door.assess(doorRequest(req)).refusal;
    if (refusal) {
      outcomes.push(refusal);
      continue;
    }
    // Admitted: what it holds counts before the next request is decided.
    const t = tallyOf(req.ownerId);
    tallies.set(req.ownerId, { sessions: t.sessions + 1, gpus: t.gpus + occupancyOf(req) });
    for (const scope of [
      ...(req.projectId ? [{ column: "project_id" as const, id: req.projectId }] : []),
      { column: "organization_id" as const, id: req.organizationId },
    ]) {
      added.set(keyOf(scope), (added.get(keyOf(scope)) ?? 0) + occupancyOf(req));
      const k = classKey(scope, req.offering.spec.gpuModel, req.capacityClass ?? "guaranteed");
      classAdded.set(k, (classAdded.get(k) ?? 0) + occupancyOf(req));
    }
    door.letIn(doorRequest(req));
    outcomes.push(row);
  }

  const inserted = await insertSessions(
    tx,
    outcomes.filter((o): o is NewSessionRow => !(o instanceof Error)),
  );
  let next = 0;
  return outcomes.map((o) => (o instanceof Error ? o : (inserted[next++] as SessionRow)));
}
