import type { Knex } from "knex";

// GPU-seconds per session and UTC day, kept by Postgres itself from usage_samples (statement triggers over
// the rows a statement really inserted or deleted), so the month's figures (dashboard tiles, the usage
// report) read one row per session and day instead of every sample of the month. A sample counts on the
// day its period starts, as the raw queries did. Because the roll-up moves in the same transaction as the
// samples, it is exact at every moment, the current day included, whatever path writes samples (the
// internal route, a retry arriving days late, a bulk load). The figures it sums are fixed once written.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable("usage_daily", (t) => {
    t.text("session").notNullable();
    t.date("day").notNullable();
    t.decimal("gpu_seconds", 18, 3).notNullable();
    t.integer("samples").notNullable();
    t.primary(["session", "day"]);
    t.index(["day"]);
  });
  await knex.raw(`
    CREATE FUNCTION usage_daily_add() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      -- Sorted: two statements touching the same days take the rows' locks in one order (no deadlock).
      INSERT INTO usage_daily (session, day, gpu_seconds, samples)
      SELECT session, (period_start AT TIME ZONE 'UTC')::date, sum(gpu_seconds), count(*)
        FROM new_rows GROUP BY 1, 2 ORDER BY 1, 2
      ON CONFLICT (session, day) DO UPDATE
        SET gpu_seconds = usage_daily.gpu_seconds + excluded.gpu_seconds,
            samples = usage_daily.samples + excluded.samples;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE FUNCTION usage_daily_remove() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE usage_daily d
         SET gpu_seconds = d.gpu_seconds - o.gpu_seconds, samples = d.samples - o.samples
        FROM (SELECT session, (period_start AT TIME ZONE 'UTC')::date AS day, sum(gpu_seconds) AS gpu_seconds,
                     count(*) AS samples
                FROM old_rows GROUP BY 1, 2) o
       WHERE d.session = o.session AND d.day = o.day;
      DELETE FROM usage_daily WHERE samples = 0;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE FUNCTION usage_daily_cleared() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      TRUNCATE usage_daily;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE FUNCTION usage_samples_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'a usage sample''s session, period_start and gpu_seconds never change (usage_daily sums them)'
        USING ERRCODE = 'integrity_constraint_violation';
    END $$`);
  await knex.raw(`CREATE TRIGGER usage_daily_on_insert AFTER INSERT ON usage_samples
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION usage_daily_add()`);
  await knex.raw(`CREATE TRIGGER usage_daily_on_delete AFTER DELETE ON usage_samples
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION usage_daily_remove()`);
  await knex.raw(`CREATE TRIGGER usage_daily_on_truncate AFTER TRUNCATE ON usage_samples
    FOR EACH STATEMENT EXECUTE FUNCTION usage_daily_cleared()`);
  // Billing's update of billed_at does not fire this (other columns only, and only when they differ).
  await knex.raw(`CREATE TRIGGER usage_samples_fixed BEFORE UPDATE OF session, period_start, gpu_seconds ON usage_samples
    FOR EACH ROW WHEN (OLD.session IS DISTINCT FROM NEW.session OR OLD.period_start IS DISTINCT FROM NEW.period_start
      OR OLD.gpu_seconds IS DISTINCT FROM NEW.gpu_seconds)
    EXECUTE FUNCTION usage_samples_fixed()`);
  // What was there before the triggers: under the table lock, so no insert slips between backfill and trigger.
  await knex.raw("LOCK TABLE usage_samples IN SHARE MODE");
  await knex.raw(`INSERT INTO usage_daily (session, day, gpu_seconds, samples)
    SELECT session, (period_start AT TIME ZONE 'UTC')::date, sum(gpu_seconds), count(*)
      FROM usage_samples GROUP BY 1, 2`);
}
