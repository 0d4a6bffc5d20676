/**
 * Customers as stored: the API's look-up, the dashboard's list and search, and the customer's
 * update-notice subscription (decisions §12). Owns the table `customer` (purchase-store.ts creates
 * customers with their purchase; a notice's one statement also moves the purchase to the version).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { isoUtc, likeContains, sql, statement, type NoRows } from '../db/sql';
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

const customerExistsRead = statement<{ found: number }, { orgId: string; customerId: string }>(
  { found: true },
  (p) => sql`select 1 as found from customer where id = ${p.customerId} and organisation_id = ${p.orgId}`,
);

const CUSTOMER_JSON_COLUMNS = sql`id, name, email, ${isoUtc('created_at')} as "createdAt"`;

const customersRead = statement<CustomerJson, { orgId: string; email: string | null; after: string | null; limit: number }>(
  { id: true, name: true, email: true, createdAt: true },
  (p) => sql`select ${CUSTOMER_JSON_COLUMNS} from customer
     where organisation_id = ${p.orgId}
       and (${p.email}::text is null or lower(email) = ${p.email}::text)
       and (${p.after}::uuid is null or (created_at, id) < (select created_at, id from customer where id = ${p.after}::uuid))
     order by created_at desc, id desc limit ${p.limit}`,
);

/**
 * The customer look-up: by email (at most one customer per organisation), else every customer
 * of the organisation, newest first, one page at a time.
 */
export async function findCustomers(em: EntityManager, orgId: string, query: CustomerQuery): Promise<CustomerJson[]> {
  const email = query.email === undefined ? undefined : normaliseEmail(query.email);
  if (query.after !== undefined) {
    const found = isUuid(query.after) ? await customerExistsRead.first(em, { orgId, customerId: query.after }) : undefined;
    if (found === undefined) throw new NotFoundError('after: no customer with that id');
  }
  return customersRead.rows(em, { orgId, email: email || null, after: query.after ?? null, limit: query.limit });
}

/** The dashboard's customer list: what the JSON API has, plus purchase counts and search. */
export interface CustomerRow {
  id: string;
  email: string;
  name: string;
  createdAt: string;
  purchases: number;
  lastPurchaseAt: string | null;
}

const customerSearchRead = statement<Omit<CustomerRow, 'purchases'> & { purchases: string }, {
  orgId: string; emailLike: string | null; nameLike: string | null; limit: number;
}>(
  { id: true, email: true, name: true, createdAt: true, purchases: true, lastPurchaseAt: true },
  (p) => sql`select c.id, c.email, c.name, ${isoUtc('c.created_at')} as "createdAt",
            (select count(*) from purchase p where p.customer_id = c.id) as purchases,
            (select ${isoUtc('max(p.created_at)')} from purchase p where p.customer_id = c.id) as "lastPurchaseAt"
       from customer c where c.organisation_id = ${p.orgId}
        and (${p.emailLike}::text is null or c.email ilike ${p.emailLike}::text or c.name ilike ${p.nameLike}::text)
      order by c.created_at desc, c.id desc limit ${p.limit}`,
);

/** Customers newest first, optionally those whose email or name contains `q`, with their purchase counts. */
export async function searchCustomers(em: EntityManager, orgId: string, q: string, limit: number): Promise<CustomerRow[]> {
  const text = q.trim();
  const rows = await customerSearchRead.rows(em, {
    orgId, emailLike: text ? likeContains(normaliseEmail(text)) : null, nameLike: text ? likeContains(text) : null, limit,
  });
  return rows.map((r) => ({ ...r, purchases: Number(r.purchases) }));
}

// ---------------------------------------------------------------------------------------------
// Update notices (decisions §12)
// ---------------------------------------------------------------------------------------------

const noticePrepare = statement<{ notice_token: string }, { purchaseId: string; versionId: string; customerId: string; token: string }>(
  { notice_token: true },
  (p) => sql`with moved as (update purchase set version_id = ${p.versionId} where id = ${p.purchaseId})
     update customer set notice_token = coalesce(notice_token, ${p.token}) where id = ${p.customerId} returning notice_token`,
);

/**
 * The purchase now downloads the announced version (the notice's link is to it), and the
 * customer's unsubscribe token (`token` unless they have one already). One statement.
 */
export async function movePurchaseToNoticeVersion(
  em: EntityManager, purchaseId: string, versionId: string, customerId: string, token: string,
): Promise<string> {
  const row = await noticePrepare.first(em, { purchaseId, versionId, customerId, token });
  return (row as { notice_token: string }).notice_token;
}

const noticeTokenEnsure = statement<{ notice_token: string }, { customerId: string; token: string }>(
  { notice_token: true },
  (p) => sql`update customer set notice_token = coalesce(notice_token, ${p.token}) where id = ${p.customerId} returning notice_token`,
);

/** The customer's unsubscribe token (`token` unless they have one already), for an email that offers it. One statement. */
export async function customerNoticeToken(em: EntityManager, customerId: string, token: string): Promise<string> {
  const row = await noticeTokenEnsure.first(em, { customerId, token });
  return (row as { notice_token: string }).notice_token;
}

const subscriptionRead = statement<{ org_name: string; off: boolean }, { token: string }>(
  { org_name: true, off: true },
  (p) => sql`select o.name as org_name, c.update_notices_off_at is not null as off
     from customer c join organisation o on o.id = c.organisation_id where c.notice_token = ${p.token}`,
);

/** Whose update notices an unsubscribe token stops, and whether they are off already; undefined for an unknown token. */
export async function noticeSubscriptionOf(em: EntityManager, token: string): Promise<{ org_name: string; off: boolean } | undefined> {
  return subscriptionRead.first(em, { token });
}

const noticesOffUpdate = statement<NoRows, { token: string; now: Date }>(
  {}, (p) => sql`update customer set update_notices_off_at = coalesce(update_notices_off_at, ${p.now}) where notice_token = ${p.token}`,
);

/** No more update notices for the customer of this token. Idempotent. */
export async function turnNoticesOff(em: EntityManager, token: string, now: Date): Promise<void> {
  await noticesOffUpdate.run(em, { token, now });
}
