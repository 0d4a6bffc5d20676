/**
 * The longest text each kind of input field accepts, the same on every route and form (decisions:
 * bad input gets a clear 400 and loses nothing). Checked by the routes' zod schemas before any
 * other work, so a megabyte in a name costs a length comparison, not a parse.
 */
import { z } from 'zod';
import { MAX_EMAIL_LENGTH } from './email';

export const FIELD_LIMITS = {
  email: MAX_EMAIL_LENGTH,
  /** A person's or a product's name. */
  name: 200,
  /** A platform's order id (also the longest workflow-id part it becomes). */
  orderId: 200,
  paymentMethod: 50,
  /** Ids of our own rows (UUIDs), platform words, version ids: anything longer is no id of ours. */
  id: 100,
  amount: 40,
  currency: 16,
  /** Integration secrets, private keys and account ids. */
  secret: 1024,
  accountId: 200,
  password: 1024,
  /** A download token or a CSRF token. */
  token: 256,
  versionLabel: 100,
  /** A SKU as a platform sent it (the front door keeps up to 1000 characters of any order field). */
  sku: 1000,
  /** A search box. */
  search: 200,
} as const;

/** A text field of at most `max` characters; longer is a 400 that says so (the field is named by the error handler). */
export function boundedText(max: number) {
  return z.string().max(max, `too long: at most ${max} characters`);
}

/**
 * A SKU as a platform sent it, named in a path or query (map-and-replay). PostgreSQL text cannot
 * hold NUL, and no recorded SKU contains one (the front door refuses them).
 */
export const skuAsSent = () => boundedText(FIELD_LIMITS.sku).refine((sku) => !sku.includes('\u0000'), 'a SKU cannot contain NUL characters');
