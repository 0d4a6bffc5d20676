import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { isoUtc } from '../db/sql';
import { NotFoundError } from '../domain/errors';
import { PLATFORMS, type Platform } from '../domain/platforms';
import { DELIVERY_STATUSES, ITEM_OUTCOMES, type DeliveryStatus } from '../domain/statuses';
import { isUuid } from '../domain/uuid';

/** A delivery log entry as GET /api/webhook-deliveries lists it (decisions §3). */
export const DeliveryJsonSchema = z.object({
  id: z.string(),
  platform: z.enum(PLATFORMS),
  externalOrderId: z.string(),
  status: z.enum(DELIVERY_STATUSES),
  unmatched: z.boolean(),
  test: z.boolean(),
  items: z.array(z.object({
    sku: z.string().nullable(),
    productId: z.string().nullable(),
    outcome: z.enum(ITEM_OUTCOMES).nullable().describe('null while the line is being fulfilled'),
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

type DeliveryRow = Omit<DeliveryJson, 'items'>;
type ItemRow = DeliveryJson['items'][number] & { deliveryId: string };

/** The delivery log, newest first, one page at a time, each entry with its lines in order. */
export async function listDeliveries(em: EntityManager, orgId: string, query: DeliveryQuery): Promise<DeliveryJson[]> {
  const where = ['organisation_id = ?'];
  const params: unknown[] = [orgId];
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
  const deliveries = await em.execute<DeliveryRow[]>(
    `select id, platform, external_order_id as "externalOrderId", status, unmatched, test,
       ${isoUtc('received_at')} as "receivedAt", ${isoUtc('completed_at')} as "completedAt", workflow_ids as "workflowIds"
     from webhook_delivery where ${where.join(' and ')}
     order by received_at desc, id desc limit ?`,
    [...params, query.limit],
  );
  if (deliveries.length === 0) return [];
  const items = await em.execute<ItemRow[]>(
    `select delivery_id as "deliveryId", sku, product_id as "productId", outcome, reason, purchase_id as "purchaseId"
     from webhook_delivery_item where delivery_id in (?) order by delivery_id, line_index`,
    [deliveries.map((d) => d.id)],
  );
  const byDelivery = new Map<string, DeliveryJson['items']>(deliveries.map((d) => [d.id, []]));
  for (const { deliveryId, ...item } of items) byDelivery.get(deliveryId)?.push(item);
  return deliveries.map((d) => ({ ...d, items: byDelivery.get(d.id) ?? [] }));
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
