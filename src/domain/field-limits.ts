/**
 * The longest text each kind of input field accepts, the same on every route and form (decisions:
 * bad input gets a clear 400 and loses nothing). Checked by the routes' zod schemas before any
 * other work, so a megabyte in a name costs a length comparison, not a parse.
 */
import { z } from 'zod';
import { MAX_EMAIL_LENGTH } from './email';
import { unstorableText } from './storable-text';

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
  /**
   * A SKU a product lists (its extra SKUs): short enough for the unique index on product SKUs
   * (a B-tree entry holds at most about 2700 bytes, and a character takes up to 4).
   */
  productSku: 200,
  /** A search box. */
  search: 200,
} as const;

/**
 * The one schema of an input text field: at most `max` characters, and storable (see
 * `unstorableText`); anything else is a 400 that says why (the field is named by the error handler).
 */
export function boundedText(max: number) {
  return z.string().max(max, `too long: at most ${max} characters`).superRefine((value, context) => {
    const why = unstorableText(value);
    if (why !== null) context.addIssue({ code: 'custom', message: why });
  });
}
