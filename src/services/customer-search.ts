import type { EntityManager } from '@mikro-orm/postgresql';
import { isoUtc } from '../db/legacy-sql';
import { likeContains } from '../db/sql';
import { normaliseEmail } from '../domain/email';

/** The dashboard's customer list: what the JSON API has, plus purchase counts and search. */

export interface CustomerRow {
  id: string;
  email: string;
  name: string;
  createdAt: string;
  purchases: number;
  lastPurchaseAt: string | null;
}

/** Customers newest first, optionally those whose email or name contains `q`, with their purchase counts. */
export async function searchCustomers(em: EntityManager, orgId: string, q: string, limit: number): Promise<CustomerRow[]> {
  const text = q.trim();
  const params: unknown[] = [orgId];
  let filter = '';
  if (text) {
    filter = ' and (c.email ilike ? or c.name ilike ?)';
    params.push(likeContains(normaliseEmail(text)), likeContains(text));
  }
  const rows = await em.execute<Array<CustomerRow & { purchases: string }>>(
    `select c.id, c.email, c.name, ${isoUtc('c.created_at')} as "createdAt",
            (select count(*) from purchase p where p.customer_id = c.id) as purchases,
            (select ${isoUtc('max(p.created_at)')} from purchase p where p.customer_id = c.id) as "lastPurchaseAt"
       from customer c where c.organisation_id = ?${filter}
      order by c.created_at desc, c.id desc limit ?`,
    [...params, limit],
  );
  return rows.map((r) => ({ ...r, purchases: Number(r.purchases) }));
}
