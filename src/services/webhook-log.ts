import type { EntityManager, Knex } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { isoUtc, preparedRows } from '../db/legacy-sql';
import { NotFoundError } from '../domain/errors';
import { PLATFORMS, type Platform } from '../domain/platforms';
import { DELIVERY_KINDS, DELIVERY_STATUSES, ITEM_OUTCOMES, type DeliveryStatus } from '../domain/statuses';
import { isUuid } from '../domain/uuid';

/** A delivery log entry as GET /api/webhook-deliveries lists it (decisions §3). */
export const DeliveryJsonSchema = z.object({
  id: z.string(),
  kind: z.enum(DELIVERY_KINDS).describe('an order, or a refund or dispute event (decisions §9)'),
  platform: z.enum(PLATFORMS),
  externalOrderId: z.string().describe('the order id; for a payments-c refund or dispute, the payment (payment_intent) it names'),
  status: z.enum(DELIVERY_STATUSES),
  unmatched: z.boolean(),
  test: z.boolean(),
  items: z.array(z.object({
    sku: z.string().nullable(),
    productId: z.string().nullable(),
    outcome: z.enum(ITEM_OUTCOMES).nullable().describe('null while the line is being fulfilled or revoked'),
    reason: z.string().nullable(),
    purchaseId: z.string().nullable(),
  })),
  receivedAt: z.string(),
  completedAt: z.string().nullable(),
  workflowIds: z.array(z.string()),
});
export type DeliveryJson = z.infer<typeof DeliveryJsonSchema>;

/** The Purchases page counter (decisions §3). */
export const UnmatchedSkusJsonSchema = z.object({
  total: z.number().int().describe('sum of count'),
  skus: z.array(z.object({
    platform: z.enum(PLATFORMS),
    sku: z.string(),
    count: z.number().int(),
    lastSeenAt: z.string(),
  })),
});
export type UnmatchedSkusJson = z.infer<typeof UnmatchedSkusJsonSchema>;

export interface DeliveryQuery {
  status?: DeliveryStatus;
  platform?: Platform;
  /** Id of the last entry of the previous page. */
  after?: string;
  limit: number;
}

/**
 * One page of the log with each entry's lines, in one statement: the page is cut first, so lines
 * are read for its entries only; an entry's lines come as one JSON array, in line order.
 * Bindings: those of `where`, then the limit.
 */
const pageSql = (where: string) => `
  select d.id, d.kind, d.platform, d.external_order_id as "externalOrderId", d.status, d.unmatched, d.test,
    coalesce(i.items, '[]') as items,
    ${isoUtc('d.received_at')} as "receivedAt", ${isoUtc('d.completed_at')} as "completedAt", d.workflow_ids as "workflowIds"
  from (
    select id, kind, platform, external_order_id, status, unmatched, test, received_at, completed_at, workflow_ids
    from webhook_delivery where ${where} order by received_at desc, id desc limit ?
  ) d
  left join lateral (
    select json_agg(json_build_object('sku', sku, 'productId', product_id, 'outcome', outcome, 'reason', reason,
      'purchaseId', purchase_id) order by line_index) as items
    from webhook_delivery_item where delivery_id = d.id
  ) i on true
  order by d.received_at desc, d.id desc`;

/** The delivery log, newest first, one page at a time, each entry with its lines in order. */
export async function listDeliveries(em: EntityManager, orgId: string, query: DeliveryQuery): Promise<DeliveryJson[]> {
  const where = ['organisation_id = ?'];
  const params: Knex.Value[] = [orgId];
  if (query.status) {
    where.push('status = ?');
    params.push(query.status);
  }
  if (query.platform) {
    where.push('platform = ?');
    params.push(query.platform);
  }
  if (query.after !== undefined) {
    const found = isUuid(query.after)
      ? await em.execute('select 1 from webhook_delivery where id = ? and organisation_id = ?', [query.after, orgId])
      : [];
    if (found.length === 0) throw new NotFoundError('after: no delivery with that id');
    where.push('(received_at, id) < (select received_at, id from webhook_delivery where id = ?)');
    params.push(query.after);
  }
  return preparedRows<DeliveryJson>(em, pageSql(where.join(' and ')), [...params, query.limit]);
}

/** These entries of the organisation's log, as GET /api/webhook-deliveries shows them (outbound events' data). */
export async function deliveriesByIds(em: EntityManager, orgId: string, ids: string[]): Promise<DeliveryJson[]> {
  if (ids.length === 0) return [];
  return preparedRows<DeliveryJson>(
    em, pageSql('organisation_id = ? and id in (select jsonb_array_elements_text(?::jsonb)::uuid)'), [orgId, JSON.stringify(ids), ids.length],
  );
}

/** Unmatched SKUs of the organisation, most recently seen first; `total` is the sum of the counts. */
export async function unmatchedSkus(em: EntityManager, orgId: string): Promise<UnmatchedSkusJson> {
  const skus = await em.execute<UnmatchedSkusJson['skus']>(
    `select platform, sku, count, ${isoUtc('last_seen_at')} as "lastSeenAt" from unmatched_sku
     where organisation_id = ? and count > 0 order by last_seen_at desc, platform, sku`,
    [orgId],
  );
  return { total: skus.reduce((sum, s) => sum + s.count, 0), skus };
}
