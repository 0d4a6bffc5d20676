import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { isoUtc } from '../db/legacy-sql';
import { NotFoundError } from '../domain/errors';
import { isUuid } from '../domain/uuid';
import { normaliseEmail } from '../domain/email';

/** A customer as GET /api/customers lists it (decisions §3). */
export const CustomerJsonSchema = z.object({
  id: z.string(),
  name: z.string(),
  email: z.string(),
  createdAt: z.string(),
});
export type CustomerJson = z.infer<typeof CustomerJsonSchema>;

export interface CustomerQuery {
  /** Matched case-insensitively after trimming; blank = no filter. */
  email?: string;
  /** Id of the last customer of the previous page. */
  after?: string;
  limit: number;
}

/**
 * The customer look-up: by email (at most one customer per organisation), else every customer
 * of the organisation, newest first, one page at a time.
 */
export async function findCustomers(em: EntityManager, orgId: string, query: CustomerQuery): Promise<CustomerJson[]> {
  const where = ['organisation_id = ?'];
  const params: unknown[] = [orgId];
  const email = query.email === undefined ? undefined : normaliseEmail(query.email);
  if (email) {
    where.push('lower(email) = ?');
    params.push(email);
  }
  if (query.after !== undefined) {
    const found = isUuid(query.after)
      ? await em.execute('select 1 from customer where id = ? and organisation_id = ?', [query.after, orgId])
      : [];
    if (found.length === 0) throw new NotFoundError('after: no customer with that id');
    where.push('(created_at, id) < (select created_at, id from customer where id = ?)');
    params.push(query.after);
  }
  return em.execute<CustomerJson[]>(
    `select id, name, email, ${isoUtc('created_at')} as "createdAt" from customer
     where ${where.join(' and ')} order by created_at desc, id desc limit ?`,
    [...params, query.limit],
  );
}
