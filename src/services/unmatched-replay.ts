/**
 * Map-and-replay (decisions §12): the sales an unknown SKU held back, mapping that SKU to a product
 * (one of its extra SKUs), and "deliver these", which fulfils them through the same workflows and
 * de-duplication keys a webhook would. Each held item moves from `unmatched` back to "in progress"
 * (its entry to `Pending`) in the transaction that records its workflow start in the outbox, and the
 * run then reports `fulfilled`, `duplicate` or `error` like for any delivery. The items are claimed
 * row by row (`for update`, re-checked after any wait), so a double click, two staff at once or a
 * redelivery of the original webhook meanwhile create nothing twice: the redelivery and the replay
 * share the line's workflow id and the purchase's unique key.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { productOfSku, skuProduct } from '../catalogue/catalogue-store';
import { claimHeldLines, heldSaleRows, heldWithoutOrderCount, isSkuSeen, replayHeldLines } from '../deliveries/held-line-store';
import type { NewDispatch } from '../domain/dispatch';
import type { Principal } from '../domain/access';
import { ConflictError, NotFoundError, ValidationError } from '../domain/errors';
import { isEmailAddress } from '../domain/email';
import { lineDispatch, type HeldLine } from '../domain/held-line';
import { normaliseSku } from '../domain/ids';
import { getProduct, updateProduct } from './products';
import type { FileStorage } from '../storage/file-storage';
import { enqueueDispatches } from './workflow-outbox';

export const HeldSaleSchema = z.object({
  itemId: z.uuid(),
  deliveryId: z.uuid(),
  platform: z.string(),
  externalOrderId: z.string(),
  sku: z.string(),
  receivedAt: z.string(),
  customerEmail: z.string().nullable(),
  amount: z.string().nullable(),
  currency: z.string().nullable(),
  deliverable: z.boolean().describe('false for lines recorded before sales were kept for replay, or without a usable customer email: record those by hand'),
});
export type HeldSale = z.infer<typeof HeldSaleSchema>;

export const HeldSalesSchema = z.object({
  sku: z.string(),
  productId: z.uuid().nullable().describe('the product the SKU maps to now; null while unmapped'),
  sales: z.array(HeldSaleSchema),
});
export type HeldSales = z.infer<typeof HeldSalesSchema>;

export const DeliveredSchema = z.object({
  sku: z.string(),
  productId: z.uuid(),
  delivering: z.number().int().describe('held lines now being fulfilled (their entries are Pending until the runs report)'),
  notDeliverable: z.number().int().describe('held lines that kept no order details (recorded before replay existed) or no usable customer email'),
});
export type Delivered = z.infer<typeof DeliveredSchema>;

/** A SKU as it arrives in a path: trimmed; empty (lines that carried none) cannot be mapped. */
function skuOf(raw: string): string {
  const sku = raw.trim();
  if (sku === '') throw new ValidationError('a line without a SKU cannot be mapped: record it by hand');
  return sku;
}

async function mappedProduct(em: EntityManager, orgId: string, sku: string): Promise<string | null> {
  return productOfSku(em, orgId, normaliseSku(sku));
}

/**
 * A held line can be delivered when it kept its order and that order has a usable customer email:
 * the front door held it for its SKU before it looked at the email, so it is checked here, as a
 * webhook of the order would be now.
 */
function deliverable(line: HeldLine | null): line is HeldLine {
  return line !== null && isEmailAddress(line.customer.email);
}

/** The sales an SKU held back (its `unmatched` lines), oldest first, and the product it maps to now. */
export async function heldSales(em: EntityManager, orgId: string, rawSku: string): Promise<HeldSales> {
  const sku = skuOf(rawSku);
  const rows = await heldSaleRows(em, orgId, normaliseSku(sku));
  return {
    sku,
    productId: await mappedProduct(em, orgId, sku),
    sales: rows.map((r) => ({
      itemId: r.item_id, deliveryId: r.delivery_id, platform: r.platform, externalOrderId: r.external_order_id, sku: r.sku,
      receivedAt: r.received_at, customerEmail: r.held_line?.customer.email || null, amount: r.held_line?.amount ?? null,
      currency: r.held_line?.currency ?? null, deliverable: deliverable(r.held_line),
    })),
  };
}

/**
 * Maps an SKU to a product (adds it to the product's extra SKUs; one that maps to another product
 * is 409) and answers the sales it held back. Mapping twice to the same product changes nothing.
 */
export async function mapUnmatchedSku(em: EntityManager, storage: FileStorage, editor: Pick<Principal, 'orgId' | 'role'>, rawSku: string, productId: string): Promise<HeldSales> {
  const { orgId } = editor;
  const sku = skuOf(rawSku);
  const { product } = await getProduct(em, orgId, productId);
  if (!product.skus.includes(normaliseSku(sku)) && product.slug !== normaliseSku(sku)) {
    await updateProduct(em, storage, editor, productId, { addSkus: [sku] });
  }
  return heldSales(em, orgId, sku);
}

/**
 * "Deliver these": every held line of the SKU that kept its order starts (or joins) its line's
 * fulfilment run, through the outbox, as if the webhook had just brought it. The SKU must map to a
 * live product (published, with a ready active version); otherwise 409 and nothing changes.
 */
export async function deliverHeldSales(em: EntityManager, orgId: string, rawSku: string): Promise<Delivered> {
  const sku = skuOf(rawSku);
  const key = normaliseSku(sku);
  return em.transactional(async (tx) => {
    const product = await skuProduct(tx, orgId, key);
    if (!product) throw new ConflictError(`the SKU ${sku} maps to no product: map it first`);
    if (product.status !== 'published' || !product.live) {
      throw new ConflictError('the product is not live (published with a ready active version): its sales would be held again');
    }
    const held = await claimHeldLines(tx, orgId, key);
    // Lines without a usable email stay held and are counted, to be recorded by hand.
    const claimed = held.filter((item) => deliverable(item.held_line));
    const left = await heldWithoutOrderCount(tx, orgId, key);
    const dispatches: NewDispatch[] = claimed.map((item) => lineDispatch(
      { orgId, platform: item.platform, externalOrderId: item.external_order_id, itemId: item.id }, item.held_line, product.id,
    ));
    if (claimed.length > 0) {
      const items = claimed.map((item, index) => ({ id: item.id, delivery_id: item.delivery_id, workflow_id: dispatches[index].workflowId }));
      // The items and their entries wait for the runs again; the SKU's counter counts the lines still held.
      await replayHeldLines(tx, orgId, product.id, items);
      await enqueueDispatches(tx, dispatches);
    }
    return { sku, productId: product.id, delivering: claimed.length, notDeliverable: Number(left) + held.length - claimed.length };
  });
}

/** 404 for an SKU nobody sent (no counter row and no held line): nothing to map or deliver. */
export async function assertSkuSeen(em: EntityManager, orgId: string, rawSku: string): Promise<void> {
  const sku = skuOf(rawSku);
  if (!(await isSkuSeen(em, orgId, normaliseSku(sku)))) throw new NotFoundError(`no sale was held back by the SKU ${sku}`);
}
