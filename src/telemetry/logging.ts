/**
 * What the service's logs may say of a request and of an error. A request's URL can carry a
 * customer's token (`/d/{token}`, `/unsubscribe/{token}`), cart-e's shared secret and emails
 * (`?secret=`, `/api/customers?email=`, the dashboard's searches); a database error's message
 * carries its statement with the values written in (the ORM inlines them) and its detail the row's.
 */
import { DriverException } from '@mikro-orm/postgresql';
import { DatabaseError } from 'pg';
import { stdSerializers, type SerializedError } from 'pino';

/** Path segments that are credentials, by the route prefix before them. */
const TOKEN_PATHS = /^\/(d|unsubscribe)\/[^/?#]+/;

/** The path with tokens replaced, and the query string's names without their values. */
export function loggableUrl(url: string): string {
  const at = url.indexOf('?');
  const path = (at === -1 ? url : url.slice(0, at)).replace(TOKEN_PATHS, '/$1/[token]');
  if (at === -1) return path;
  const names = url.slice(at + 1).split('&').filter((pair) => pair !== '').map((pair) => `${pair.split('=')[0]}=[redacted]`);
  return `${path}?${names.join('&')}`;
}

/** A server's address as it may be shown: a password in it (`smtp://user:secret@relay`) becomes `[redacted]`. */
export function addressWithoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password === '') return url;
    parsed.password = '';
    return parsed.toString().replace(`//${parsed.username}@`, `//${parsed.username}:[redacted]@`);
  } catch {
    return '[an address that is not a URL]';
  }
}

type DatabaseFailure = Error & { code?: string; constraint?: string; table?: string };

/** An error of the ORM or of the driver, whose message and detail may hold values. */
export function isDatabaseError(error: unknown): error is DatabaseFailure {
  return error instanceof DriverException || error instanceof DatabaseError;
}

/** What may be said of a database error: its SQLSTATE. */
export function databaseErrorMessage(error: DatabaseFailure): string {
  return `database error ${error.code ?? ''}`.trim();
}

/**
 * A database error by its class, SQLSTATE, table and constraint and the frames of its stack, never
 * its message or detail; any other error as pino writes it.
 */
export function loggableError(error: Error): Pick<SerializedError, 'type' | 'message' | 'stack'> & Record<string, unknown> {
  if (!isDatabaseError(error)) return stdSerializers.err(error);
  const frames = (error.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line)).join('\n');
  return { type: error.name, message: databaseErrorMessage(error), stack: frames, code: error.code, constraint: error.constraint, table: error.table };
}
