import type { Knex } from "knex";

/**
 * Serializes the door (quota gate) of one organization's sessions across users and API replicas, held
 * until the transaction ends: sessions of different people share the project's and the organization's
 * wallets, budget and GPU limits, so two concurrent creates must not both pass on what only one fits.
 * Taken after the owner's lock (lockOwner), never before: one order, no deadlock.
 */
export async function lockOrganizationDoor(tx: Knex.Transaction, organizationId: string): Promise<void> {
  await tx.raw("SELECT pg_advisory_xact_lock(hashtextextended(?, 6))", [`sessions-door:${organizationId}`]);
}
