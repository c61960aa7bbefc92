import { FOREIGN_KEY_VIOLATION, sqlState, UNIQUE_VIOLATION } from "../../db/sqlstate.ts";
import { Conflict } from "../../errors.ts";

/** Runs a write and turns Postgres' unique and foreign-key violations into 409s. */
export async function mapConstraintErrors<T>(
  write: () => Promise<T>,
  what: { unique: string; foreignKey?: string; details?: Record<string, unknown> },
): Promise<T> {
  try {
    return await write();
  } catch (err) {
    const state = sqlState(err);
    if (state === UNIQUE_VIOLATION) throw new Conflict(what.unique, what.details ?? {}, "already_exists");
    if (state === FOREIGN_KEY_VIOLATION && what.foreignKey) throw new Conflict(what.foreignKey, what.details ?? {});
    throw err;
  }
}
