/**
 * A local stand-in for storefront-a's (Shopify's) Admin REST order list, a real HTTP server on
 * 127.0.0.1, modelled on the documented behaviour (sources in test/fixtures/webhooks/README.md, §10):
 *
 * - `GET /admin/api/{version}/orders.json?status=any&updated_at_min=…&limit=…`: orders changed at or
 *   after `updated_at_min`; `limit` defaults to 50, at most 250.
 * - Cursor pagination: when more follow, `Link: <…orders.json?limit=…&page_info=…>; rel="next"` (and
 *   `rel="previous"` after the first page); a request with `page_info` may carry only `limit` (other
 *   filters are answered 400, as the platform does).
 * - `X-Shopify-Access-Token` must be the shop's token, else 401 `{"errors":"[API] Invalid API key or access token …"}`.
 * - `X-Shopify-Shop-Api-Call-Limit: used/40` on every answer: a leaky bucket of 40 leaking 2 a second.
 * - On a chosen page, once: 429 with `Retry-After` (seconds) and the documented error text.
 */
import { webhookSample } from '../../fixtures/samples';
import { startListServer, type ListServer } from './list-server';

const BUCKET_SIZE = 40;
const LEAK_PER_SECOND = 2;
const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 250;

export interface SimulatedOrder {
  id: string;
  email: string;
  updatedAt: Date;
  financialStatus?: 'paid' | 'pending';
}

export interface StorefrontASimulator extends Pick<ListServer, 'origin' | 'requests' | 'throttleOnce' | 'close'> {
  accessToken: string;
  /** Every answer says the bucket holds `used` of 40 (null: the real fill), as a busy shop's other apps would make it. */
  reportBucketFill(used: number | null): void;
  /** Every request is answered 401 from now on (the token was revoked). */
  revokeToken(): void;
  /** The order as the platform's API (and its webhook) gives it: the sample with the order's id, email and times. */
  orderJson(order: SimulatedOrder): string;
}

/**
 * The storefront-a sample as an API order: the same object, one line (ebook-pro), with the order's
 * id, email and change time. Ids are written as bare JSON numbers, as the platform sends them.
 */
function orderJsonOf(order: SimulatedOrder): string {
  const sample = JSON.parse(webhookSample('storefront-a.json').toString('utf8')) as Record<string, unknown> & { line_items: unknown[] };
  const json = JSON.stringify({
    ...sample,
    id: 0,
    email: order.email,
    contact_email: order.email,
    customer: { ...(sample.customer as object), email: order.email },
    financial_status: order.financialStatus ?? 'paid',
    updated_at: order.updatedAt.toISOString(),
    line_items: [sample.line_items[0]],
    total_price: '29.00',
  });
  return json.replace('"id":0', `"id":${order.id}`);
}

interface Cursor {
  offset: number;
  updatedAtMin: string;
  limit: number;
}

export async function startStorefrontASimulator(orders: SimulatedOrder[], accessToken = 'shpat_simulated_read_orders_token'): Promise<StorefrontASimulator> {
  let reportedFill: number | null = null;
  let bucket = 0;
  let lastLeak = Date.now();
  const sorted = [...orders].sort((a, b) => a.updatedAt.getTime() - b.updatedAt.getTime() || a.id.localeCompare(b.id));

  const callLimit = (): Record<string, string> => {
    const now = Date.now();
    bucket = Math.max(0, bucket - ((now - lastLeak) / 1000) * LEAK_PER_SECOND) + 1;
    lastLeak = now;
    return { 'x-shopify-shop-api-call-limit': `${reportedFill ?? Math.min(BUCKET_SIZE, Math.ceil(bucket))}/${BUCKET_SIZE}` };
  };

  const server = await startListServer(({ req, url, origin, revoked, answer, throttled }) => {
    if (req.method !== 'GET' || !/^\/admin\/api\/\d{4}-\d{2}\/orders\.json$/.test(url.pathname)) return answer(404, { errors: 'Not Found' });
    if (revoked || req.headers['x-shopify-access-token'] !== accessToken) {
      return answer(401, { errors: '[API] Invalid API key or access token (unrecognized login or wrong password)' });
    }
    const limit = Math.min(MAX_LIMIT, Number(url.searchParams.get('limit') ?? DEFAULT_LIMIT));
    let cursor: Cursor;
    const pageInfo = url.searchParams.get('page_info');
    if (pageInfo !== null) {
      const filters = [...url.searchParams.keys()].filter((k) => k !== 'page_info' && k !== 'limit');
      if (filters.length > 0) return answer(400, { errors: { [filters[0]]: `${filters[0]} cannot be passed when page_info is present` } });
      cursor = { ...(JSON.parse(Buffer.from(pageInfo, 'base64url').toString('utf8')) as Cursor), limit };
    } else {
      cursor = { offset: 0, updatedAtMin: url.searchParams.get('updated_at_min') ?? new Date(0).toISOString(), limit };
    }
    const page = Math.floor(cursor.offset / cursor.limit);
    if (throttled(page, { errors: 'Exceeded 2 calls per second for api client. Reduce request rates to resume uninterrupted service.' })) return;
    const matching = sorted.filter((o) => o.updatedAt.getTime() >= Date.parse(cursor.updatedAtMin));
    const slice = matching.slice(cursor.offset, cursor.offset + cursor.limit);
    const link = (offset: number, rel: string) => {
      const info = Buffer.from(JSON.stringify({ offset, updatedAtMin: cursor.updatedAtMin, limit: cursor.limit })).toString('base64url');
      return `<${origin}${url.pathname}?limit=${cursor.limit}&page_info=${info}>; rel="${rel}"`;
    };
    const links = [
      ...(cursor.offset > 0 ? [link(Math.max(0, cursor.offset - cursor.limit), 'previous')] : []),
      ...(cursor.offset + cursor.limit < matching.length ? [link(cursor.offset + cursor.limit, 'next')] : []),
    ];
    answer(200, `{"orders":[${slice.map(orderJsonOf).join(',')}]}`, links.length > 0 ? { link: links.join(', ') } : {}, page);
  }, callLimit);

  return {
    origin: server.origin,
    accessToken,
    requests: server.requests,
    throttleOnce: server.throttleOnce,
    reportBucketFill: (used) => {
      reportedFill = used;
    },
    revokeToken: server.revokeCredentials,
    orderJson: orderJsonOf,
    close: server.close,
  };
}
