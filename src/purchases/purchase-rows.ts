import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { isoUtc, preparedRows } from '../db/sql';
import { NotFoundError } from '../domain/errors';
import { normaliseAmount } from '../domain/money';
import { PURCHASE_SOURCES, type PurchaseSource } from '../domain/platforms';
import { isUuid } from '../domain/uuid';
import { readInBatches } from './keyset-batches';

/** One purchase as GET /api/purchases lists it (decisions §3). */
export const PurchaseJsonSchema = z.object({
  id: z.string(),
  productId: z.string(),
  versionId: z.string().nullable(),
  customer: z.object({ id: z.string(), name: z.string(), email: z.string() }),
  amount: z.string().describe('decimal string with the currency\'s minor-unit digits: "19.99", "29.00", "500" for JPY'),
  currency: z.string().describe('upper-case ISO code'),
  paymentMethod: z.string(),
  source: z.enum(PURCHASE_SOURCES).describe('api (API key), manual (dashboard) or the platform word'),
  externalOrderId: z.string().nullable(),
  test: z.boolean(),
  receiptSentAt: z.string().nullable(),
  createdAt: z.string(),
});
export type PurchaseJson = z.infer<typeof PurchaseJsonSchema>;

interface PurchaseRow {
  id: string;
  product_id: string;
  version_id: string | null;
  customer_id: string;
  customer_name: string;
  customer_email: string;
  amount: string;
  currency: string;
  payment_method: string;
  source: PurchaseSource;
  external_order_id: string | null;
  test: boolean;
  receipt_sent_at: string | null;
  created_at: string;
}

/**
 * The stored numeric(20,4) text ("19.9000") with the currency's minor digits ("19.90", "500" for
 * JPY). A stored amount finer than the currency allows is shown as stored, never rounded.
 */
export function displayAmount(stored: string, currency: string): string {
  const exact = normaliseAmount(stored, currency);
  if (exact !== null) return exact;
  return stored.includes('.') ? stored.replace(/0+$/, '').replace(/\.$/, '') : stored;
}

export function purchaseJson(row: PurchaseRow): PurchaseJson {
  return {
    id: row.id,
    productId: row.product_id,
    versionId: row.version_id,
    customer: { id: row.customer_id, name: row.customer_name, email: row.customer_email },
    amount: displayAmount(row.amount, row.currency),
    currency: row.currency.toUpperCase(),
    paymentMethod: row.payment_method,
    source: row.source,
    externalOrderId: row.external_order_id,
    test: row.test,
    receiptSentAt: row.receipt_sent_at,
    createdAt: row.created_at,
  };
}

// Newest first; (created_at, id) is the keyset, and a cursor is a purchase id whose position is
// looked up by primary key, so no timestamp ever makes a round trip through JavaScript.
const SELECT = `select p.id, p.product_id, p.version_id, c.id as customer_id, c.name as customer_name,
    c.email as customer_email, p.amount::text as amount, p.currency, p.payment_method, p.source,
    p.external_order_id, p.test, ${isoUtc('p.receipt_sent_at')} as receipt_sent_at,
    ${isoUtc('p.created_at')} as created_at
  from purchase p join customer c on c.id = p.customer_id
  where p.organisation_id = ?`;
const AFTER = ` and (p.created_at, p.id) < (select a.created_at, a.id from purchase a where a.id = ?)`;
const ORDER = ` order by p.created_at desc, p.id desc limit ?`;

export interface PurchasePage {
  /** The id of the purchase the page starts after (the previous page's last id). */
  after?: string;
  limit?: number;
}

/**
 * The organisation's purchases, newest first, in batches of one query each. An `after` that is not
 * a purchase of this organisation is 404, like any other id of another organisation.
 */
export async function purchaseBatches(em: EntityManager, orgId: string, page: PurchasePage): Promise<AsyncIterable<PurchaseRow[]>> {
  if (page.after !== undefined) {
    const found = isUuid(page.after)
      ? await em.execute('select 1 from purchase where id = ? and organisation_id = ?', [page.after, orgId])
      : [];
    if (found.length === 0) throw new NotFoundError('after: no purchase with that id');
  }
  return readInBatches<PurchaseRow>(
    (after, size) => preparedRows<PurchaseRow>(
      em,
      SELECT + (after === null ? '' : AFTER) + ORDER,
      after === null ? [orgId, size] : [orgId, after, size],
    ),
    { after: page.after, limit: page.limit },
  );
}
