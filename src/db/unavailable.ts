/**
 * PostgreSQL out of reach for now, as opposed to a statement that is wrong: the caller may try again
 * in a moment. One predicate for the error handler (503 with Retry-After) and for the writes that
 * must not be given up while the server restarts (the sent-email log's result).
 */

/** Socket errors of a server that is down, restarting or gone from the network. */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * SQLSTATEs of a server going away or not yet back: class 08 (connection exception), 57P01
 * (terminated by a fast shutdown), 57P02 (crash shutdown), 57P03 (the database system is starting up).
 */
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[123])$/;

interface DriverError {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  errors?: unknown;
  cause?: unknown;
}

/**
 * Every pool connection busy past the acquire timeout (knex's KnexTimeoutError, which MikroORM may
 * wrap in a DriverException): overload, not a bug.
 */
function isPoolExhausted(error: DriverError): boolean {
  return error.name === 'KnexTimeoutError' || (typeof error.message === 'string' && /Timeout acquiring a connection/.test(error.message));
}

/**
 * True for a pool with no free connection, a refused or dropped connection (node-postgres reports a
 * server that closed the socket as "Connection terminated"), and the SQLSTATEs of a shutdown or a
 * start-up. MikroORM copies the driver error's fields onto its own; Node reports a refused connection
 * to several addresses as an AggregateError, so `errors` and `cause` are looked through too.
 */
export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 3) return false;
  const e = error as DriverError;
  if (isPoolExhausted(e)) return true;
  if (typeof e.code === 'string' && (UNREACHABLE_CODES.has(e.code) || UNAVAILABLE_SQLSTATE.test(e.code))) return true;
  if (typeof e.message === 'string' && /^Connection terminated/.test(e.message)) return true;
  const nested = [...(Array.isArray(e.errors) ? e.errors : []), e.cause];
  return nested.some((inner) => isDatabaseUnavailable(inner, depth + 1));
}
