// Whether an error means "the database cannot be reached right now" (a retryable 503 `unavailable` for
// the caller) rather than a bug (a 500 `internal`). http/envelope.ts asks this of every unexpected error.
import { sqlState } from "./sqlstate.ts";

/** SQLSTATEs of a server going away or refusing connections (class 08 is matched as a whole). */
const UNREACHABLE_SQLSTATES = new Set([
  "57P01", // admin_shutdown: the server is stopping
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now: the server is starting up or in recovery
  "53300", // too_many_connections
]);

/** Socket errors of a connection that could not be made or was cut. */
const UNREACHABLE_SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EPIPE",
  "ECONNABORTED",
  "ENETDOWN",
  "EHOSTDOWN",
]);

/**
 * pg's own errors for a connection lost mid-query, or a query unanswered past the client's timeout
 * (db/knex.ts), carry no code, only these messages; knex puts the
 * statement in front of a query's error ("BEGIN; - Connection terminated unexpectedly"). Anchored at the
 * end, where pg's message is: the statement before it may quote a caller's text.
 */
const PG_CONNECTION_LOST =
  /(?:^| - )(?:Connection terminated(?: unexpectedly| due to connection timeout)?|Client has encountered a connection error and is not queryable|Client was closed and is not queryable|Query read timeout)$/;

export function isDatabaseUnreachable(err: unknown): boolean {
  if (typeof err !== "object" || err === null) return false;
  // knex: no connection could be taken from the pool before acquireConnectionTimeout.
  if ((err as { name?: unknown }).name === "KnexTimeoutError") return true;
  const code = sqlState(err);
  if (code !== undefined)
    return code.startsWith("08") || UNREACHABLE_SQLSTATES.has(code) || UNREACHABLE_SOCKET_CODES.has(code);
  const message = (err as { message?: unknown }).message;
  // pg's connect timeout (connectionTimeoutMillis in db/knex.ts) is this bare message, never a query's.
  return typeof message === "string" && (PG_CONNECTION_LOST.test(message) || message === "timeout expired");
}
