/**
 * A local stand-in for plugin-b's (WooCommerce's) REST order list, a real HTTP server on 127.0.0.1,
 * modelled on the documented behaviour (sources in test/fixtures/webhooks/README.md, §10):
 *
 * - `GET /wp-json/wc/v3/orders` answers a bare JSON array of order resources. `modified_after` keeps
 *   orders modified strictly after it, read in the site's time zone unless `dates_are_gmt=true` (this
 *   site runs at UTC+02:00, so the difference shows); `orderby` date (creation)|modified|id (include,
 *   title and slug are taken and sorted as date), `order` asc|desc (default date, desc; another value
 *   is answered 400 rest_invalid_param); `per_page` default 10, at most 100 (more is answered 400
 *   rest_invalid_param), `page` from 1 (past the last: an empty array). Each request is a fresh query:
 *   an order modified between two requests has moved in a list ordered by modification time, and the
 *   orders after its old place have moved up one.
 * - Every page carries `X-WP-Total` and `X-WP-TotalPages`, and `Link` with `rel="prev"`/`rel="next"`.
 * - Auth: HTTP Basic with the REST API key (consumer key as user, secret as password), or the
 *   `consumer_key`/`consumer_secret` query parameters; none → 401 woocommerce_rest_cannot_view, a wrong
 *   key or secret → 401 woocommerce_rest_authentication_error, as WooCommerce words them.
 * - On a chosen page, once: 429 with `Retry-After` (what a host or security plugin in front of the
 *   site answers; WooCommerce's own REST API sets no limit).
 * - `touch(id)` modifies an order now (as an edit in the shop's admin would); `afterPage(page, …)` runs
 *   something once right after that page is answered, so a test can modify an order while a run reads.
 *
 * A page's number in `requests`, `throttleOnce` and `afterPage` is its place in the whole list (0-based:
 * the orders before its first one, by the list's order, over `per_page`, rounded up), whatever `page`
 * it asked for: a reader that asks page 1 again from a later `modified_after` (overlapping the last
 * page read by an order or so) is on its second page, as one asking `page=2` is.
 */
import { webhookSample } from '../../fixtures/samples';
import { startOrderListServer, type OrderListServer } from './order-list-server';

const DEFAULT_PER_PAGE = 10;
const MAX_PER_PAGE = 100;
const ORDER_BY = ['date', 'id', 'include', 'title', 'slug', 'modified'];
/** The shop's WordPress time zone: `date_modified` is local time, `date_modified_gmt` UTC. */
const SITE_OFFSET_MS = 2 * 3_600_000;

export interface SimulatedOrder {
  /** Digits: the platform's order ids are integers. */
  id: string;
  email: string;
  updatedAt: Date;
  status?: 'processing' | 'completed' | 'pending' | 'on-hold' | 'refunded';
}

export interface PluginBSimulator extends Pick<OrderListServer, 'origin' | 'requests' | 'throttleOnce' | 'revokeToken' | 'close'> {
  consumerKey: string;
  consumerSecret: string;
  /** Modifies the order at `at` (default now): its `date_modified` moves, its creation time does not. */
  touch(id: string, at?: Date): void;
  /** Runs `action` once, right after page `page` (0-based, its place in the whole list) is answered 200. */
  afterPage(page: number, action: () => void): void;
  /** The order as the platform's API (and its webhook) gives it: the sample with the order's id, email, status and times. */
  orderJson(order: SimulatedOrder): string;
}

/** WordPress writes dates to the second, without an offset. */
function wpDate(at: number): string {
  return new Date(at).toISOString().slice(0, 19);
}

/** WordPress reads a date without an offset as site time (or UTC with `dates_are_gmt`). */
function wpParse(text: string, gmt: boolean): number {
  const hasOffset = /(Z|[+-]\d{2}:?\d{2})$/i.test(text);
  const at = Date.parse(hasOffset ? text : `${text}Z`);
  return hasOffset || gmt ? at : at - SITE_OFFSET_MS;
}

/** Whole seconds, as the platform stores them. */
function modifiedAt(order: SimulatedOrder): number {
  return Math.floor(order.updatedAt.getTime() / 1000) * 1000;
}

/**
 * The plugin-b sample as an API order: the same resource, one line (ebook-pro), with the order's id,
 * email, status and modification time. The id is written as a bare JSON number, as the platform does.
 */
function orderJsonOf(order: SimulatedOrder): string {
  const sample = JSON.parse(webhookSample('plugin-b.json').toString('utf8')) as Record<string, unknown> & { line_items: unknown[] };
  const modified = modifiedAt(order);
  const json = JSON.stringify({
    ...sample,
    id: 0,
    number: order.id,
    status: order.status ?? 'processing',
    billing: { ...(sample.billing as object), email: order.email },
    date_modified: wpDate(modified + SITE_OFFSET_MS),
    date_modified_gmt: wpDate(modified),
    line_items: [sample.line_items[0]],
    total: '29.00',
  });
  return json.replace('"id":0', `"id":${order.id}`);
}

const REFUSALS = {
  missing: { code: 'woocommerce_rest_cannot_view', message: 'Sorry, you cannot list resources.', data: { status: 401 } },
  key: { code: 'woocommerce_rest_authentication_error', message: 'Consumer key is invalid.', data: { status: 401 } },
  secret: { code: 'woocommerce_rest_authentication_error', message: 'Consumer secret is invalid.', data: { status: 401 } },
};

/** The key and secret a request carries: HTTP Basic, else the query parameters. */
function credentialsOf(authorization: string | undefined, url: URL): { key: string; secret: string } | null {
  const basic = /^Basic\s+(\S+)$/i.exec(authorization ?? '');
  if (basic) {
    const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return colon < 0 ? null : { key: decoded.slice(0, colon), secret: decoded.slice(colon + 1) };
  }
  const key = url.searchParams.get('consumer_key');
  const secret = url.searchParams.get('consumer_secret');
  return key !== null && secret !== null ? { key, secret } : null;
}

export async function startPluginBSimulator(
  orders: SimulatedOrder[],
  consumerKey = 'ck_0123456789abcdef0123456789abcdef01234567',
  consumerSecret = 'cs_76543210fedcba9876543210fedcba9876543210',
): Promise<PluginBSimulator> {
  // The simulator's own copies: `touch` changes them, not the caller's orders.
  const stock = orders.map((order) => ({ ...order }));
  const createdAt = new Map(orders.map((o) => [o.id, modifiedAt(o)]));
  const afterPages = new Map<number, () => void>();
  const server = await startOrderListServer(({ headers, url, revoked, answer, takeThrottle }) => {
    if (url.pathname.replace(/\/$/, '') !== '/wp-json/wc/v3/orders') {
      return answer(404, { code: 'rest_no_route', message: 'No route was found matching the URL and request method.', data: { status: 404 } });
    }
    const given = credentialsOf(headers.authorization, url);
    if (given === null) return answer(401, REFUSALS.missing);
    if (revoked || given.key !== consumerKey) return answer(401, REFUSALS.key);
    if (given.secret !== consumerSecret) return answer(401, REFUSALS.secret);

    const perPage = Number(url.searchParams.get('per_page') ?? DEFAULT_PER_PAGE);
    const page = Number(url.searchParams.get('page') ?? 1);
    if (!Number.isInteger(perPage) || perPage < 1 || perPage > MAX_PER_PAGE || !Number.isInteger(page) || page < 1) {
      const param = Number.isInteger(page) && page >= 1 ? 'per_page' : 'page';
      return answer(400, { code: 'rest_invalid_param', message: `Invalid parameter(s): ${param}`, data: { status: 400, params: { [param]: `${param} is out of range` } } });
    }
    const orderBy = url.searchParams.get('orderby') ?? 'date';
    const order = url.searchParams.get('order') ?? 'desc';
    if (!ORDER_BY.includes(orderBy) || !['asc', 'desc'].includes(order)) {
      const param = ORDER_BY.includes(orderBy) ? 'order' : 'orderby';
      const allowed = param === 'order' ? 'asc, desc' : ORDER_BY.join(', ');
      return answer(400, { code: 'rest_invalid_param', message: `Invalid parameter(s): ${param}`, data: { status: 400, params: { [param]: `${param} is not one of ${allowed}.` } } });
    }

    const gmt = url.searchParams.get('dates_are_gmt') === 'true';
    const after = url.searchParams.get('modified_after');
    const direction = order === 'asc' ? 1 : -1;
    const key = (o: SimulatedOrder): number => {
      if (orderBy === 'id') return Number(o.id);
      return orderBy === 'modified' ? modifiedAt(o) : createdAt.get(o.id) ?? modifiedAt(o);
    };
    const sorted = [...stock].sort((a, b) => direction * (key(a) - key(b) || Number(a.id) - Number(b.id)));
    const matching = sorted.filter((o) => after === null || modifiedAt(o) > wpParse(after, gmt));
    const place = Math.ceil((sorted.length - matching.length + (page - 1) * perPage) / perPage);
    const throttled = takeThrottle(place);
    if (throttled !== undefined) return answer(429, { code: 'rest_too_many_requests', message: 'Too many requests. Please wait and try again.', data: { status: 429 } }, { 'retry-after': String(throttled) }, place);

    const totalPages = Math.ceil(matching.length / perPage);
    const slice = matching.slice((page - 1) * perPage, page * perPage);
    const link = (to: number, rel: string) => {
      const target = new URL(url);
      target.searchParams.set('page', String(to));
      return `<${target.toString()}>; rel="${rel}"`;
    };
    const links = [...(page > 1 ? [link(page - 1, 'prev')] : []), ...(page < totalPages ? [link(page + 1, 'next')] : [])];
    answer(200, `[${slice.map(orderJsonOf).join(',')}]`, {
      'x-wp-total': String(matching.length),
      'x-wp-totalpages': String(totalPages),
      ...(links.length > 0 ? { link: links.join(', ') } : {}),
    }, place);
    const action = afterPages.get(place);
    afterPages.delete(place);
    action?.();
  });

  return {
    origin: server.origin,
    requests: server.requests,
    throttleOnce: server.throttleOnce,
    revokeToken: server.revokeToken,
    close: server.close,
    consumerKey,
    consumerSecret,
    orderJson: orderJsonOf,
    touch: (id, at = new Date()) => {
      const order = stock.find((o) => o.id === id);
      if (!order) throw new Error(`no order ${id}`);
      order.updatedAt = at;
    },
    afterPage: (page, action) => afterPages.set(page, action),
  };
}
