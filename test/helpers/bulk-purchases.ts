import type { EntityManager } from '@mikro-orm/postgresql';

export interface BulkPurchases {
  orgId: string;
  productId: string;
  versionId: string | null;
  count: number;
  /** Distinct customers the purchases are spread over (round robin). */
  customers: number;
  /** Makes the customers' emails unique across calls. */
  tag: string;
  /** created_at of purchase n is start + n seconds (so the newest is the last one). */
  start?: string;
}

/**
 * Inserts purchases (and their customers) in two set-based statements with generate_series: fast
 * enough for a million rows, for list tests and the purchases-list benchmark.
 */
export async function insertPurchases(em: EntityManager, p: BulkPurchases): Promise<void> {
  await em.execute(
    `insert into customer (id, organisation_id, email, name, created_at)
     select gen_random_uuid(), ?, 'bulk-' || ? || '-' || g || '@example.com', 'Bulk Buyer ' || g, now()
     from generate_series(0, ? - 1) g`,
    [p.orgId, p.tag, p.customers],
  );
  await em.execute(
    `with numbered as (
       select id, (row_number() over (order by email) - 1) as n from customer
       where organisation_id = ? and email like 'bulk-' || ? || '-%'
     )
     insert into purchase (id, organisation_id, product_id, version_id, customer_id, amount, currency,
       payment_method, source, external_order_id, test, receipt_status, receipt_sent_at, created_at)
     select gen_random_uuid(), ?, ?, ?, numbered.id, (g % 10000) / 100.0, 'USD', 'custom', 'api', null, false,
       'sent', null, ?::timestamptz + g * interval '1 second'
     from generate_series(0, ? - 1) g join numbered on numbered.n = g % ?`,
    [p.orgId, p.tag, p.orgId, p.productId, p.versionId, p.start ?? '2026-01-01T00:00:00Z', p.count, p.customers],
  );
}
