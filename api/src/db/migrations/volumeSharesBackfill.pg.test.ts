// 20261126002200 on real Postgres: a database migrated up to just before it, with shares set through the
// API (as the audit log recorded them) before volume_shares existed, then the backfill.
import type { Knex } from "knex";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../db.test-support.ts";
import { migrateLatest } from "../knex.ts";
import { migrations } from "./index.ts";

const BACKFILL = "20261126002200_volume_shares_backfill";

async function migrateBefore(db: Knex, name: string): Promise<void> {
  const upTo = migrations.slice(
    0,
    migrations.findIndex((m) => m.name === name),
  );
  await db.migrate.latest({
    migrationSource: {
      getMigrations: async () => upTo,
      getMigrationName: (m: (typeof upTo)[number]) => m.name,
      getMigration: async (m: (typeof upTo)[number]) => ({ up: m.up, down: async () => {} }),
    },
  });
}

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase({ migrate: false });
  await migrateBefore(t.db, BACKFILL);
}, 120_000);
afterAll(async () => t?.drop());

const vid = (n: string) => `vol_${n.padEnd(20, "0")}`;

async function aVolume(db: Knex, id: string): Promise<void> {
  await db("volumes").insert({
    id,
    organization_id: "org_b",
    owner_kind: "user",
    owner_id: "usr_owner",
    name: id,
    size_gb: 1,
    pool: "fast",
    namespace: "berth-org-b",
    cr_name: id.replace("_", "-"),
    created_by: "usr_owner",
    created_at: new Date(),
    updated_at: new Date(),
  });
}

/** An audit row as the route layer writes one for PUT /storage/volumes/{id}/shares. */
async function shareRequest(db: Knex, volumeId: string, shares: unknown, outcome = "success"): Promise<void> {
  await db("audit_log").insert({
    actor_kind: "user",
    actor_id: "usr_owner",
    organization_id: "org_b",
    action: "storage.volume.share",
    target_kind: "volume",
    target_id: volumeId,
    outcome,
    status: outcome === "success" ? 200 : 409,
    details: "{}",
    diff: JSON.stringify({ after: { shares } }),
  });
}

const sharesOf = async (db: Knex, volumeId: string) =>
  db("volume_shares")
    .where({ volume_id: volumeId })
    .orderBy(["subject_kind", "subject_id"])
    .select("subject_kind", "subject_id", "access");

describe("the volume shares backfill", () => {
  it("fills in each volume's last successful share list from the audit log, and leaves newer rows alone", async () => {
    const db = t.db;
    await db("organizations").insert({ id: "org_b", name: "B", slug: "b" });
    await db("users").insert({ id: "usr_owner", email: "owner@b.test", password_hash: "x" });
    const [set, changed, emptied, failedLast, since, never] = [
      "set",
      "changed",
      "emptied",
      "failed",
      "since",
      "never",
    ].map(vid);
    for (const id of [set, changed, emptied, failedLast, since, never]) await aVolume(db, id as string);

    // Shared once.
    await shareRequest(db, set as string, [
      { kind: "user", id: "usr_a", access: "read_only" },
      { kind: "project", id: "prj_x", access: "read_write" },
    ]);
    // Shared, then the list replaced: only the last list counts.
    await shareRequest(db, changed as string, [{ kind: "user", id: "usr_a", access: "read_only" }]);
    await shareRequest(db, changed as string, [{ kind: "user", id: "usr_b", access: "read_write" }]);
    // Shared, then emptied.
    await shareRequest(db, emptied as string, [{ kind: "user", id: "usr_a", access: "read_only" }]);
    await shareRequest(db, emptied as string, []);
    // A later request that failed (locked, say) changed nothing on the resource.
    await shareRequest(db, failedLast as string, [{ kind: "user", id: "usr_a", access: "read_only" }]);
    await shareRequest(db, failedLast as string, [{ kind: "user", id: "usr_c", access: "read_only" }], "failed");
    // Shared again after volume_shares existed: the route wrote its rows, which are the truth.
    await shareRequest(db, since as string, [{ kind: "user", id: "usr_a", access: "read_only" }]);
    await db("volume_shares").insert({
      volume_id: since,
      subject_kind: "user",
      subject_id: "usr_d",
      access: "read_write",
    });
    // A share request for a volume that is gone adds nothing (nothing to point at).
    await shareRequest(db, vid("gone"), [{ kind: "user", id: "usr_a", access: "read_only" }]);

    // The backfill first, then any migration that came after it.
    expect((await migrateLatest(db))[0]).toBe(BACKFILL);

    expect(await sharesOf(db, set as string)).toEqual([
      { subject_kind: "project", subject_id: "prj_x", access: "read_write" },
      { subject_kind: "user", subject_id: "usr_a", access: "read_only" },
    ]);
    expect(await sharesOf(db, changed as string)).toEqual([
      { subject_kind: "user", subject_id: "usr_b", access: "read_write" },
    ]);
    expect(await sharesOf(db, emptied as string)).toEqual([]);
    expect(await sharesOf(db, failedLast as string)).toEqual([
      { subject_kind: "user", subject_id: "usr_a", access: "read_only" },
    ]);
    expect(await sharesOf(db, since as string)).toEqual([
      { subject_kind: "user", subject_id: "usr_d", access: "read_write" },
    ]);
    expect(await sharesOf(db, never as string)).toEqual([]);
    expect(await db("volume_shares").where({ volume_id: vid("gone") })).toEqual([]);
  });
});
