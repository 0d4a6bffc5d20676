/**
 * storefront-a's order list (Admin REST `GET /admin/api/<version>/orders.json`, decisions §15), beside
 * its webhook adapter. The first page asks `status=any&updated_at_min=…&limit=…`; the next ones only
 * `page_info` and `limit`, as the answer's `Link: <…>; rel="next"` header gives them (the platform
 * refuses filters beside `page_info`). Auth: `X-Shopify-Access-Token`. Rate: a leaky bucket whose fill
 * the answer tells in `X-Shopify-Shop-Api-Call-Limit: used/size`; near the top the next request waits,
 * and a 429's `Retry-After` is honoured. Each order is the same Order object the `orders/paid` webhook
 * carries, mapped by the adapter's own `storefrontAOrder`.
 */
import { z } from 'zod';
import { text } from './fields';
import { getJson, listedArray, listedOrder, nextLink, notAPage, type OrderListClient, type OrderListPage } from './order-list';
import { storefrontAOrder } from './storefront-a';

export const STOREFRONT_A_API_VERSION = '2025-01';
const PAGE_SIZE = 50;
/** Past this share of the bucket the next page waits for it to drain (the standard plan leaks 2 a second). */
const SLOW_DOWN_ABOVE = 0.8;
const LEAK_PER_SECOND = 2;

const CredentialsSchema = z.object({
  shopDomain: z.string().trim().min(1).max(255).regex(/^[a-z0-9][a-z0-9.-]*$/i, 'a host name like your-shop.myshopify.com')
    .describe('storefront-a: the shop\'s domain, e.g. your-shop.myshopify.com'),
  accessToken: z.string().min(1).max(500).describe('storefront-a: an Admin API access token with the read_orders scope'),
});
export type StorefrontACredentials = z.infer<typeof CredentialsSchema>;

/** How long to wait before the next request so the bucket (`used/size`) stays below SLOW_DOWN_ABOVE. */
export function callLimitWaitMs(header: string | string[] | undefined): number {
  const match = /^(\d+)\/(\d+)$/.exec((Array.isArray(header) ? header[0] : header ?? '').trim());
  if (!match) return 0;
  const [used, size] = [Number(match[1]), Number(match[2])];
  const over = used - Math.floor(size * SLOW_DOWN_ABOVE);
  return over > 0 ? Math.ceil((over / LEAK_PER_SECOND) * 1000) : 0;
}

export const storefrontAOrders: OrderListClient<StorefrontACredentials> = {
  platform: 'storefront-a',
  credentials: CredentialsSchema,
  scope: 'read_orders',
  credentialFields: [
    { field: 'shopDomain', label: 'Shop domain (your-shop.myshopify.com)', secret: false },
    { field: 'accessToken', label: 'Admin API access token (read_orders only)', secret: true },
  ],
  defaultOrigin: (credentials) => `https://${credentials.shopDomain}`,

  async fetchPage({ origin, credentials, since, cursor, allowPrivate }): Promise<OrderListPage> {
    const url = new URL(`/admin/api/${STOREFRONT_A_API_VERSION}/orders.json`, origin);
    url.searchParams.set('limit', String(PAGE_SIZE));
    if (cursor === null) {
      url.searchParams.set('status', 'any');
      url.searchParams.set('updated_at_min', since);
    } else {
      url.searchParams.set('page_info', cursor);
    }
    const answer = await getJson(url, { 'x-shopify-access-token': credentials.accessToken }, allowPrivate);
    if (answer.status !== 200) return notAPage(answer, new Date());
    const orders = listedArray(answer.body, 'orders');
    const next = nextLink(answer.headers.link);
    return {
      kind: 'page',
      orders: orders.map((order, index) => listedOrder(order, `orders[${index}]`, storefrontAOrder, (o) => text(o.updated_at))),
      nextCursor: next === null ? null : new URL(next).searchParams.get('page_info'),
      slowDownMs: callLimitWaitMs(answer.headers['x-shopify-shop-api-call-limit']),
    };
  },
};
