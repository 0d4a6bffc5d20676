import type { EntityManager } from '@mikro-orm/postgresql';
import { isoUtc } from '../db/sql';
import type { PurchaseSource } from '../domain/platforms';
import type { ReceiptStatus } from '../domain/statuses';
import { isUuid } from '../domain/uuid';
import { displayAmount } from './purchase-list';

/** The dashboard's read models for its lists: what the JSON API has, plus names and search. */

export interface PurchaseRow {
  id: string;
  createdAt: string;
  customerId: string;
  customerEmail: string;
  customerName: string;
  productId: string;
  productName: string;
  amount: string;
  currency: string;
  source: PurchaseSource;
  externalOrderId: string | null;
  test: boolean;
  receiptStatus: ReceiptStatus;
  receiptSentAt: string | null;
}

/** `%` and `_` typed by a person are literal characters, not wildcards. */
const likeContains = (text: string): string => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * Purchases newest first, optionally matching `q`: part of the customer's email, or exactly an
 * order id, a purchase id or a customer id.
 */
export async function searchPurchases(em: EntityManager, orgId: string, q: string, limit: number): Promise<PurchaseRow[]> {
  const text = q.trim();
  const params: unknown[] = [orgId];
  let filter = '';
  if (text) {
    filter = ' and (c.email ilike ? or p.external_order_id = ?';
    params.push(likeContains(text.toLowerCase()), text);
    if (isUuid(text)) {
      filter += ' or p.id = ? or c.id = ?';
      params.push(text, text);
    }
    filter += ')';
  }
  const rows = await em.execute<Array<PurchaseRow & { amount: string }>>(
    `select p.id, ${isoUtc('p.created_at')} as "createdAt", c.id as "customerId", c.email as "customerEmail",
            c.name as "customerName", pr.id as "productId", pr.name as "productName", p.amount::text as amount,
            p.currency, p.source, p.external_order_id as "externalOrderId", p.test, p.receipt_status as "receiptStatus",
            ${isoUtc('p.receipt_sent_at')} as "receiptSentAt"
       from purchase p join customer c on c.id = p.customer_id join product pr on pr.id = p.product_id
      where p.organisation_id = ?${filter}
      order by p.created_at desc, p.id desc limit ?`,
    [...params, limit],
  );
  return rows.map((r) => ({ ...r, amount: displayAmount(r.amount, r.currency) }));
}

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
    params.push(likeContains(text.toLowerCase()), likeContains(text));
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

export interface OrderLineKey {
  source: PurchaseSource;
  externalOrderId: string;
  productId: string;
}

export const orderLineKey = (k: OrderLineKey): string => `${k.source}\n${k.externalOrderId}\n${k.productId}`;

/** Which of these platform order lines have a purchase already (recorded by a delivery or by hand). */
export async function recordedOrderLines(em: EntityManager, orgId: string, keys: OrderLineKey[]): Promise<Map<string, string>> {
  if (keys.length === 0) return new Map();
  const rows = await em.execute<Array<OrderLineKey & { id: string }>>(
    `select id, source, external_order_id as "externalOrderId", product_id as "productId" from purchase
      where organisation_id = ? and external_order_id in (?)`,
    [orgId, [...new Set(keys.map((k) => k.externalOrderId))]],
  );
  return new Map(rows.map((r) => [orderLineKey(r), r.id]));
}
