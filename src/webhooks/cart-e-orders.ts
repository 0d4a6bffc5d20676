/**
 * cart-e's order list (the Sales API `GET /v2/sales`, decisions §15), beside its webhook adapter.
 * Auth: the access token as `Authorization: Bearer` (scope `view_sales`). `after=YYYY-MM-DD` keeps
 * sales created on or after that day; pages of 10, newest first, each but the last with a
 * `next_page_key` the next request sends as `page_key` beside the same filter. Only successful sales
 * are listed; a sale refunded in full or charged back since is not handed on. A 429's `Retry-After`
 * is honoured. Each sale is mapped by the adapter's own `cartESaleOrder`.
 */
import { z } from 'zod';
import type { NormalizedOrder } from './adapter';
import { cartESaleOrder } from './cart-e';
import { firstText, isObject, requireArray, requireId, text, type JsonObject } from './fields';
import { getJson, listedOrder, notAPage, OrderListError, type OrderListClient, type OrderListPage } from './order-list';

const CredentialsSchema = z.object({
  accessToken: z.string().min(1).max(500).describe('cart-e: an access token of your application, granted view_sales only'),
});
export type CartECredentials = z.infer<typeof CredentialsSchema>;

/** The ping's sale from the API's: same purchase, the API's field names. */
function saleOrder(sale: JsonObject): NormalizedOrder {
  return cartESaleOrder({
    saleId: requireId(sale.id, 'id'),
    email: firstText(sale.purchase_email, sale.email),
    fullName: text(sale.full_name),
    permalink: text(sale.product_permalink),
    quantity: sale.quantity,
    price: sale.price,
    currency: sale.currency,
    // The API does not say what the ping's `test` does (the seller bought their own product).
    test: false,
    // `chargedback` is true only while the dispute is not won.
    paid: sale.refunded !== true && sale.chargedback !== true,
  });
}

export const cartEOrders: OrderListClient<CartECredentials> = {
  platform: 'cart-e',
  credentials: CredentialsSchema,
  scope: 'view_sales',
  credentialFields: [{ field: 'accessToken', label: 'Application access token (view_sales only)', secret: true }],
  defaultOrigin: () => 'https://api.gumroad.com',

  async fetchPage({ origin, credentials, since, cursor, allowPrivate }): Promise<OrderListPage> {
    const url = new URL('/v2/sales', origin);
    // A day, not a time: the whole UTC day of `since` is read again, and already-known sales change nothing.
    url.searchParams.set('after', new Date(since).toISOString().slice(0, 10));
    if (cursor !== null) url.searchParams.set('page_key', cursor);
    const answer = await getJson(url, { authorization: `Bearer ${credentials.accessToken}` }, allowPrivate);
    if (answer.status !== 200) return notAPage(answer, new Date());
    if (!isObject(answer.body) || answer.body.success !== true) throw new OrderListError('the sales list is not a successful JSON answer');
    let sales: unknown[];
    try {
      sales = requireArray(answer.body.sales, 'sales');
    } catch {
      throw new OrderListError('the sales list has no sales array');
    }
    return { kind: 'page', orders: sales.map((sale, i) => listedOrder(sale, `sales[${i}]`, saleOrder, (o) => text(o.created_at))), nextCursor: text(answer.body.next_page_key), slowDownMs: 0 };
  },
};
