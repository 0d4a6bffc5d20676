import { z } from 'zod';
import { boundedText, FIELD_LIMITS } from '../../../domain/field-limits';

/** Largest page a list endpoint answers at once. */
export const MAX_PAGE_SIZE = 1000;

/**
 * `?limit=&after=`, the keyset paging shared by the list endpoints: `limit` is 1 to 1000 and
 * `after` the id of the last element of the previous page (an id the organisation does not have
 * is 404, like any other id of another organisation).
 */
export function pageQuery<Limit extends z.ZodType>(what: string, limit: (schema: z.ZodCoercedNumber) => Limit) {
  return {
    limit: limit(z.coerce.number().int().min(1).max(MAX_PAGE_SIZE)).describe(`at most this many ${what} (1 to ${MAX_PAGE_SIZE})`),
    after: boundedText(FIELD_LIMITS.id).optional().describe(`id of the last of the previous page's ${what}: the page starts after it`),
  };
}
