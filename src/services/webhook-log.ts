import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { deliveriesWithIdsRows, deliveryPageRows, isDeliveryOf, unmatchedSkuRows } from '../deliveries/delivery-store';
import { NotFoundError } from '../domain/errors';
import { PLATFORMS, type Platform } from '../domain/platforms';
import { DELIVERY_KINDS, DELIVERY_SOURCES, DELIVERY_STATUSES, ITEM_OUTCOMES, type DeliverySource, type DeliveryStatus } from '../domain/statuses';
import { isUuid } from '../domain/uuid';

/** A delivery log entry as GET /api/webhook-deliveries lists it (decisions §3). */
export const DeliveryJsonSchema = z.object({
  id: z.string(),
  kind: z.enum(DELIVERY_KINDS).describe('an order, or a refund or dispute event (decisions §9)'),
  platform: z.enum(PLATFORMS),
  externalOrderId: z.string().describe('the order id; for a payments-c refund or dispute, the payment (payment_intent) it names'),
  source: z.enum(DELIVERY_SOURCES).describe('webhook: the platform sent it; reconciliation: a run of the platform\'s order list found it missed (shown "recovered")'),
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
  source?: DeliverySource;
  /** Id of the last entry of the previous page. */
  after?: string;
  limit: number;
}

/** The delivery log, newest first, one page at a time, each entry with its lines in order. */
export async function listDeliveries(em: EntityManager, orgId: string, query: DeliveryQuery): Promise<DeliveryJson[]> {
  if (query.after !== undefined) {
    const found = isUuid(query.after) && await isDeliveryOf(em, orgId, query.after);
    if (!found) throw new NotFoundError('after: no delivery with that id');
  }
  return deliveryPageRows(em, orgId, { status: query.status || null, platform: query.platform || null, source: query.source || null, after: query.after ?? null, limit: query.limit });
}

/** These entries of the organisation's log, as GET /api/webhook-deliveries shows them (outbound events' data). */
export async function deliveriesByIds(em: EntityManager, orgId: string, ids: string[]): Promise<DeliveryJson[]> {
  if (ids.length === 0) return [];
  return deliveriesWithIdsRows(em, orgId, ids);
}

/** Unmatched SKUs of the organisation, most recently seen first; `total` is the sum of the counts. */
export async function unmatchedSkus(em: EntityManager, orgId: string): Promise<UnmatchedSkusJson> {
  const skus = await unmatchedSkuRows(em, orgId);
  return { total: skus.reduce((sum, s) => sum + s.count, 0), skus };
}
