/**
 * A local stand-in for cart-e's (Gumroad's) Sales API, a real HTTP server on 127.0.0.1, modelled on
 * the documented behaviour (sources in test/fixtures/webhooks/README.md, §10):
 *
 * - `GET /v2/sales?after=YYYY-MM-DD[&page_key=…]`: successful sales created on or after that day (UTC
 *   midnight), newest first (created_at, then id, descending), 10 a page; another format of `after`
 *   or `page_key` is answered 400 `{"status":400,"error":…}`.
 * - `{"success":true,"sales":[…]}`, with `next_page_key` and `next_page_url` when more follow; the key
 *   is the last sale's creation time in microseconds and its id, and the next page holds the sales
 *   created no later and with a smaller id, under the same filter.
 * - `Authorization: Bearer <token>` (or `?access_token=`) must be the seller's token, else 401 with
 *   `WWW-Authenticate: Bearer …error="invalid_token"`.
 * - On a chosen page, once: 429 with `Retry-After` (seconds).
 *
 * Sales are the cart-e ping sample read as the API's sale object (same purchase, the API's names).
 */
import { webhookSample } from '../../fixtures/samples';
import { startOrderListServer, type OrderListServer } from './order-list-server';

const PAGE_SIZE = 10;

export interface SimulatedSale {
  /** The sale id (the ping's `sale_id`, the API's `id`). */
  id: string;
  email: string;
  createdAt: Date;
  /** Refunded in full since. */
  refunded?: boolean;
}

export interface CartESimulator extends OrderListServer {
  accessToken: string;
  /** The sale's ping, as the webhook sends it: the sample with the sale's id, email and time. */
  pingBody(sale: SimulatedSale): Buffer;
  /** The sale as the Sales API gives it. */
  saleJson(sale: SimulatedSale): Record<string, unknown>;
}

function pingOf(sale: SimulatedSale): URLSearchParams {
  const form = new URLSearchParams(webhookSample('cart-e.txt').toString('utf8'));
  form.set('sale_id', sale.id);
  form.set('email', sale.email);
  form.set('sale_timestamp', sale.createdAt.toISOString());
  form.set('refunded', String(sale.refunded === true));
  return form;
}

/** The API's sale object of the same purchase (Purchase#as_json, version 2). */
function saleJsonOf(sale: SimulatedSale): Record<string, unknown> {
  const ping = pingOf(sale);
  const get = (name: string) => ping.get(name);
  const price = Number(get('price'));
  return {
    id: get('sale_id'),
    email: get('email'),
    seller_id: get('seller_id'),
    timestamp: 'less than a minute ago',
    created_at: sale.createdAt.toISOString(),
    product_name: get('product_name'),
    product_has_variants: false,
    price,
    gumroad_fee: Number(get('gumroad_fee')),
    formatted_display_price: `$${price / 100}`,
    formatted_total_price: `$${price / 100}`,
    currency_symbol: '$',
    currency: get('currency'),
    product_id: get('product_id'),
    product_permalink: get('short_product_id'),
    refunded: sale.refunded === true,
    partially_refunded: false,
    chargedback: false,
    purchase_email: get('email'),
    full_name: get('full_name'),
    country: get('ip_country'),
    paid: price !== 0,
    has_variants: false,
    variants: {},
    has_custom_fields: false,
    custom_fields: {},
    order_id: Number(get('order_number')),
    is_product_physical: false,
    purchaser_id: get('purchaser_id'),
    is_recurring_billing: false,
    can_contact: get('can_contact') === 'true',
    is_following: false,
    disputed: false,
    dispute_won: false,
    discover_fee_charged: false,
    is_gift_sender_purchase: false,
    is_gift_receiver_purchase: false,
    referrer: get('referrer'),
    card: { visual: get('card[visual]'), type: get('card[type]'), bin: null, expiry_month: null, expiry_year: null },
    product_rating: null,
    quantity: Number(get('quantity')),
  };
}

/** `YYYYMMDDhhmmssffffff`, the creation time in microseconds as the page key writes it. */
function usec(at: Date): string {
  return `${at.toISOString().replace(/[-:T]/g, '').replace('.', '').slice(0, 17)}000`;
}

export async function startCartESimulator(sales: SimulatedSale[], accessToken = 'gumroad_simulated_view_sales_token'): Promise<CartESimulator> {
  // The platform's own numeric ids, in creation order: the page key's tie-breaker.
  const stored = [...sales]
    .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id))
    .map((sale, index) => ({ sale, rowId: index + 1, key: usec(sale.createdAt) }))
    .reverse();

  const server = await startOrderListServer(({ url, headers, revoked, answer, takeThrottle }, origin) => {
    if (url.pathname !== '/v2/sales') return answer(404, { success: false, message: 'Not found' });
    const token = /^Bearer (.+)$/.exec(headers.authorization ?? '')?.[1] ?? url.searchParams.get('access_token');
    if (revoked || token !== accessToken) {
      return answer(401, '', { 'www-authenticate': 'Bearer realm="Doorkeeper", error="invalid_token", error_description="The access token is invalid"' });
    }
    const after = url.searchParams.get('after');
    if (after !== null && (!/^\d{4}-\d{2}-\d{2}$/.test(after) || Number.isNaN(Date.parse(`${after}T00:00:00Z`)))) {
      return answer(400, { status: 400, error: "Invalid date format provided in field 'after'. Dates must be in the format YYYY-MM-DD." });
    }
    let matching = stored.filter((s) => after === null || s.sale.createdAt.getTime() >= Date.parse(`${after}T00:00:00Z`));
    const all = matching;
    const pageKey = url.searchParams.get('page_key');
    if (pageKey !== null && pageKey !== '') {
      const match = /^(\d{20})-(\d+)$/.exec(pageKey);
      if (!match) return answer(400, { status: 400, error: 'Invalid page_key.' });
      matching = matching.filter((s) => s.key <= match[1] && s.rowId < Number(match[2]));
    }
    const page = Math.floor((all.length - matching.length) / PAGE_SIZE);
    const throttled = takeThrottle(page);
    if (throttled !== undefined) return answer(429, 'Retry later\n', { 'content-type': 'text/plain', 'retry-after': String(throttled) }, page);
    const slice = matching.slice(0, PAGE_SIZE);
    const body: Record<string, unknown> = { success: true, sales: slice.map((s) => saleJsonOf(s.sale)) };
    if (matching.length > PAGE_SIZE) {
      const last = slice[slice.length - 1];
      body.next_page_key = `${last.key}-${last.rowId}`;
      const next = new URL(url.pathname, origin);
      if (after !== null) next.searchParams.set('after', after);
      next.searchParams.set('page_key', String(body.next_page_key));
      body.next_page_url = `${next.pathname}${next.search}`;
    }
    answer(200, body, {}, page);
  });

  return {
    ...server,
    accessToken,
    pingBody: (sale) => Buffer.from(pingOf(sale).toString()),
    saleJson: saleJsonOf,
  };
}
