/**
 * A local stand-in for payments-c's (Stripe's) Checkout Session list, a real HTTP server on
 * 127.0.0.1, modelled on the documented behaviour (sources in test/fixtures/webhooks/README.md, §10):
 *
 * - `GET /v1/checkout/sessions?created[gte]=<unix>&limit=…[&starting_after=<id>]`: sessions created at
 *   or after that second, newest first; `limit` 1 to 100, default 10 (outside: 400).
 * - A list object `{"object":"list","url":…,"has_more":…,"data":[…]}`; the next page starts after
 *   the id given (unknown: 400 `resource_missing`).
 * - `expand[]=data.line_items` adds each session's `line_items` list; without it they are absent.
 * - The key as `Authorization: Bearer` (or Basic with the key as user) must be the account's, else
 *   401 `{"error":{"message":"Invalid API Key provided: …","type":"invalid_request_error"}}`.
 * - On a chosen page, once: 429 with `Retry-After` (seconds) and the rate-limit error.
 *
 * Sessions are the payments-c sample's session (the event's `data.object`), one SKU, each with its
 * own id, email, payment and creation time.
 */
import { webhookSample } from '../../fixtures/samples';
import { startOrderListServer, type OrderListServer } from './order-list-server';

const DEFAULT_LIMIT = 10;
const MAX_LIMIT = 100;

export interface SimulatedSession {
  id: string;
  email: string;
  created: Date;
  paymentStatus?: 'paid' | 'unpaid';
  /** Our metadata convention's SKU; null leaves it out (the line items then name the product). */
  sku?: string | null;
}

export interface PaymentsCSimulator extends OrderListServer {
  secretKey: string;
  /** The session as the list gives it (`lineItems`: as expanded). */
  sessionJson(session: SimulatedSession, lineItems?: boolean): Record<string, unknown>;
  /** The `checkout.session.completed` event of the session, as the webhook sends it. */
  eventBody(session: SimulatedSession): Buffer;
}

type Json = Record<string, unknown>;

/** `metadata` goes into every session (a seller's own keys, e.g. `org_id`). */
export async function startPaymentsCSimulator(
  sessions: SimulatedSession[], options: { metadata?: Record<string, string>; secretKey?: string } = {},
): Promise<PaymentsCSimulator> {
  const secretKey = options.secretKey ?? 'rk_test_simulatedCheckoutSessionsRead';
  const event = JSON.parse(webhookSample('payments-c.json').toString('utf8')) as Json & { data: { object: Json } };
  const lineItemList = JSON.parse(webhookSample('payments-c.line_items.json').toString('utf8')) as Json & { data: Json[] };

  const sessionJsonOf = (session: SimulatedSession, lineItems = false): Json => {
    const sample = event.data.object;
    const sku = session.sku === undefined ? 'ebook-pro' : session.sku;
    return {
      ...sample,
      id: session.id,
      amount_subtotal: 2900,
      amount_total: 2900,
      created: Math.floor(session.created.getTime() / 1000),
      customer_details: { ...(sample.customer_details as Json), email: session.email },
      expires_at: Math.floor(session.created.getTime() / 1000) + 86_400,
      metadata: { order_ref: `pc-${session.id.slice(-8)}`, ...(sku === null ? {} : { skus: sku }), ...options.metadata },
      payment_intent: session.paymentStatus === 'unpaid' ? null : `pi_${session.id.slice(-16)}`,
      payment_status: session.paymentStatus ?? 'paid',
      status: session.paymentStatus === 'unpaid' ? 'open' : 'complete',
      ...(lineItems ? { line_items: { ...lineItemList, data: [lineItemList.data[0]], url: `/v1/checkout/sessions/${session.id}/line_items` } } : {}),
    };
  };

  const stored = [...sessions].sort((a, b) => b.created.getTime() - a.created.getTime() || b.id.localeCompare(a.id));

  const server = await startOrderListServer(({ url, headers, revoked, answer, takeThrottle }) => {
    if (url.pathname !== '/v1/checkout/sessions') {
      return answer(404, { error: { message: `Unrecognized request URL (GET: ${url.pathname}).`, type: 'invalid_request_error' } });
    }
    const auth = headers.authorization ?? '';
    const key = auth.startsWith('Bearer ') ? auth.slice(7) : auth.startsWith('Basic ') ? Buffer.from(auth.slice(6), 'base64').toString('utf8').split(':')[0] : null;
    if (revoked || key !== secretKey) {
      return answer(401, { error: { message: `Invalid API Key provided: ${(key ?? '').slice(0, 8)}****`, type: 'invalid_request_error' } });
    }
    const limit = Number(url.searchParams.get('limit') ?? DEFAULT_LIMIT);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
      return answer(400, { error: { message: 'This value must be less than or equal to 100.', param: 'limit', type: 'invalid_request_error' } });
    }
    const gte = url.searchParams.get('created[gte]');
    let matching = stored.filter((s) => gte === null || Math.floor(s.created.getTime() / 1000) >= Number(gte));
    const all = matching.length;
    const after = url.searchParams.get('starting_after');
    if (after !== null) {
      const at = matching.findIndex((s) => s.id === after);
      if (at < 0) return answer(400, { error: { code: 'resource_missing', message: `No such checkout.session: '${after}'`, param: 'starting_after', type: 'invalid_request_error' } });
      matching = matching.slice(at + 1);
    }
    const page = Math.floor((all - matching.length) / limit);
    const throttled = takeThrottle(page);
    if (throttled !== undefined) {
      return answer(429, { error: { code: 'rate_limit', message: 'Request rate limit exceeded. Learn more about rate limits here https://stripe.com/docs/rate-limits.', type: 'invalid_request_error' } }, { 'retry-after': String(throttled) }, page);
    }
    const expand = url.searchParams.getAll('expand[]').includes('data.line_items');
    answer(200, {
      object: 'list', url: '/v1/checkout/sessions', has_more: matching.length > limit,
      data: matching.slice(0, limit).map((s) => sessionJsonOf(s, expand)),
    }, {}, page);
  });

  return {
    ...server,
    secretKey,
    sessionJson: sessionJsonOf,
    eventBody: (session) => Buffer.from(JSON.stringify({ ...event, data: { object: sessionJsonOf(session) } })),
  };
}
