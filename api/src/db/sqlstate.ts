// Named SQLSTATE codes we branch on (https://www.postgresql.org/docs/current/errcodes-appendix.html).
export const UNIQUE_VIOLATION = "23505";
export const FOREIGN_KEY_VIOLATION = "23503";
export const CHECK_VIOLATION = "23514";
export const SERIALIZATION_FAILURE = "40001";
export const DEADLOCK_DETECTED = "40P01";
export const RAISE_EXCEPTION = "P0001";
// "cached plan must not change result type": a prepared statement outlived a change of its table.
export const FEATURE_NOT_SUPPORTED = "0A000";

export function sqlState(err: unknown): string | undefined {
  return typeof err === "object" && err !== null && "code" in err ? String((err as { code: unknown }).code) : undefined;
}
