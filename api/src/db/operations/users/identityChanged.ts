// Tells this process that a user's identity rows changed: what a Principal is made of (the account's
// email, super_admin flag, must_change_password, disabled, token_version, and its memberships). The
// authenticator's principal cache (domain/identity/principalCache.ts) listens and forgets the user, so a revocation
// or a role change is seen by the next request this process serves. Other replicas are not told: their
// caches expire (docs/dev/identity.md, "Revocation before expiry").
//
// Every operation that writes those rows calls identityChanged after its statement. The trap is a
// transaction: until it commits, a concurrent request still reads the old rows and could cache them
// again, so the signal is sent once more when the outermost transaction settles.
import type { Knex } from "knex";

export interface IdentityWatcher {
  /** `userId` null: anyone's identity may have changed (a cascade over many memberships). */
  identityChanged(userId: string | null): void;
}

// Weakly held: a watcher (one per authenticator; tests build many) goes when nothing else holds it.
const watchers = new Set<WeakRef<IdentityWatcher>>();

export function watchIdentityChanges(w: IdentityWatcher): void {
  watchers.add(new WeakRef(w));
}

function tell(userId: string | null): void {
  for (const ref of watchers) {
    const w = ref.deref();
    if (w) w.identityChanged(userId);
    else watchers.delete(ref);
  }
}

/** Call after writing a user's identity rows with `db` (a transaction or not); null for "anyone". */
export function identityChanged(db: Knex, userId: string | null): void {
  tell(userId);
  if (!db.isTransaction) return;
  // A savepoint settles before its outer transaction commits: wait for the outermost one.
  let trx = db as Knex.Transaction;
  while (trx.parentTransaction) trx = trx.parentTransaction;
  const again = () => tell(userId);
  trx.executionPromise.then(again, again);
}
