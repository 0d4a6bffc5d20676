import { UniqueConstraintViolationException } from '@mikro-orm/core';

/**
 * What a unique key lost to a concurrent write means to the person who sent it, by constraint name
 * prefix. The services check these keys before writing and answer the same words; this covers the
 * race between the check and the write. The one error handler answers 409 with it.
 */
const MESSAGES: Array<[prefix: string, message: string]> = [
  ['product_version', 'this version label already exists for the product'],
  ['product_sku', 'a SKU or the slug already maps to another product of this organisation'],
  ['product', 'the slug is already used by another product of this organisation'],
];

/** The 409 message of a unique violation, or null when `error` is not one. */
export function uniqueViolationMessage(error: unknown): string | null {
  if (!(error instanceof UniqueConstraintViolationException)) return null;
  const constraint = (error as { constraint?: string }).constraint ?? '';
  return MESSAGES.find(([prefix]) => constraint.startsWith(prefix))?.[1] ?? 'this already exists';
}
