/**
 * payments-c (Stripe Checkout-style event). Header `PaymentsC-Signature` (alias `Stripe-Signature`):
 * `t=<unix>,v1=<hex>[,v1=<hex>...][,v0=...]`. Expected v1 = hex HMAC-SHA256 of `${t}.${raw body}`
 * keyed by the endpoint secret as is (UTF-8, `whsec_` prefix included). Any v1 may match (secret
 * rotation); the timestamp must lie within 300 s of now, in either direction.
 *
 * Refunds and disputes (decisions §9) name the charge, not the checkout session: they are matched to
 * the order through the PaymentIntent both carry (`payment_intent`), kept on the order as
 * `paymentReference`.
 */
import {
  WebhookParseError,
  type NormalizedLine,
  type NormalizedOrder,
  type ParseResult,
  type PlatformAdapter,
  type RevocationScope,
  type SharedRoute,
  type WebhookRequest,
} from './adapter';
import {
  currencyOf,
  firstText,
  jsonObjectBody,
  minorAmount,
  objectAt,
  quantityOf,
  requireId,
  requireObject,
  text,
  type JsonObject,
} from './fields';
import { paymentsCMinorDigits } from '../domain/money';
import { partialRefund } from './revocation';
import { configured, headerValue, hmacSha256, safeEqual } from './signature';
import type { SignatureCheck } from '../domain/integration-health';

export const PAYMENTS_C_HEADERS = ['paymentsc-signature', 'stripe-signature'];
export const PAYMENTS_C_TOLERANCE_SECONDS = 300;

const ORDER_EVENTS = new Set(['checkout.session.completed', 'checkout.session.async_payment_succeeded']);
const PAID_STATUSES = new Set(['paid', 'no_payment_required']);
const REFUND_EVENT = 'charge.refunded';
const DISPUTE_EVENT = 'charge.dispute.created';

/** `t` and every `v1` of the header; other keys (v0, unknown) are ignored. */
export function parseSignatureHeader(value: string): { timestamp: number | null; signatures: string[] } {
  let timestamp: number | null = null;
  const signatures: string[] = [];
  for (const pair of value.split(',')) {
    const at = pair.indexOf('=');
    if (at < 0) continue;
    const key = pair.slice(0, at).trim();
    const item = pair.slice(at + 1).trim();
    if (key === 't' && /^\d{1,15}$/.test(item)) timestamp = Number(item);
    else if (key === 'v1' && item !== '') signatures.push(item);
  }
  return { timestamp, signatures };
}

/**
 * A stale timestamp is named only when a signature over it matches: the platform signed it, so the
 * delivery came late or this server's clock is off. Otherwise the secret or the body is wrong, and
 * the time says nothing about that.
 */
function verify(request: WebhookRequest, secret: string | undefined, now: Date): SignatureCheck {
  const header = headerValue(request.headers, ...PAYMENTS_C_HEADERS);
  if (header === undefined) return 'signature header missing';
  const { timestamp, signatures } = parseSignatureHeader(header);
  if (secret === undefined || timestamp === null || signatures.length === 0) return 'signature mismatch';
  const expected = hmacSha256(secret, [`${timestamp}.`, request.rawBody]).toString('hex');
  let matched = false;
  for (const signature of signatures) {
    // Check every candidate: no early exit that would tell which one matched.
    if (safeEqual(signature.toLowerCase(), expected)) matched = true;
  }
  if (!matched) return 'signature mismatch';
  const nowSeconds = Math.floor(now.getTime() / 1000);
  return Math.abs(nowSeconds - timestamp) <= PAYMENTS_C_TOLERANCE_SECONDS ? 'verified' : 'timestamp outside tolerance';
}

/** SKUs from our own metadata convention: `skus` (comma-separated), else `sku`. */
function metadataSkus(metadata: JsonObject | undefined): string[] {
  const list = text(metadata?.skus);
  if (list !== null) {
    const skus = list.split(',').map((s) => s.trim()).filter((s) => s !== '');
    if (skus.length > 0) return skus;
  }
  const single = text(metadata?.sku);
  return single === null ? [] : [single];
}

/** The expanded `line_items` (a list object `{data: [...]}`, or a bare array), when present. */
function expandedLineItems(session: JsonObject): unknown[] | undefined {
  const value = session.line_items;
  if (Array.isArray(value)) return value;
  const list = objectAt(value);
  return list !== undefined && Array.isArray(list.data) ? list.data : undefined;
}

function sessionLines(session: JsonObject, currency: string | null): NormalizedLine[] {
  const total = minorAmount(session.amount_total, currency, paymentsCMinorDigits);
  const skus = metadataSkus(objectAt(session.metadata));
  if (skus.length > 0) {
    return skus.map((sku) => ({ sku, quantity: 1, amount: skus.length === 1 ? total : null }));
  }
  const items = expandedLineItems(session);
  if (items !== undefined && items.length > 0) {
    return items.map((value, index): NormalizedLine => {
      const item = requireObject(value, `line_items.data[${index}]`);
      const price = objectAt(item.price);
      return {
        sku: firstText(price?.lookup_key, objectAt(price?.metadata)?.sku),
        quantity: quantityOf(item.quantity, `line_items.data[${index}].quantity`),
        amount: minorAmount(item.amount_total, currencyOf(item.currency) ?? currency, paymentsCMinorDigits),
      };
    });
  }
  // No SKU anywhere: one line without SKU, so the delivery is logged as unmatched rather than lost.
  return [{ sku: null, quantity: 1, amount: total }];
}

/**
 * The organisation an event names: `data.object.metadata.org_id`, and the connected `account`. On a
 * charge the metadata is its PaymentIntent's (copied when the payment was confirmed, so set through
 * the session's `payment_intent_data.metadata`, not its own `metadata`); a dispute's is its own and
 * starts empty, so disputes are routed by `account` unless the seller adds `org_id` to it.
 */
function routingOf(event: JsonObject): { orgId: string | null; accountId: string | null } {
  const object = objectAt(objectAt(event.data)?.object);
  return { orgId: text(objectAt(object?.metadata)?.org_id), accountId: text(event.account) };
}

/**
 * What the shared route reads before verification: the organisation or account an event names, and
 * for a refund or dispute its payment, whose purchases' organisation then receives it.
 */
function sharedRouteOf(event: JsonObject): SharedRoute {
  const isRevocation = event.type === REFUND_EVENT || event.type === DISPUTE_EVENT;
  return {
    ...routingOf(event),
    paymentReference: isRevocation ? paymentIntentId(objectAt(objectAt(event.data)?.object)?.payment_intent) : null,
  };
}

/** `orgId` and `accountId` of an order or revocation, present only when the event names them. */
function routingFields(event: JsonObject): { orgId?: string; accountId?: string } {
  const { orgId, accountId } = routingOf(event);
  return { ...(orgId !== null ? { orgId } : {}), ...(accountId !== null ? { accountId } : {}) };
}

/** A `payment_intent` as sent: its id, or the expanded object whose `id` it is; null when absent. */
function paymentIntentId(value: unknown): string | null {
  return text(value) ?? text(objectAt(value)?.id);
}

/** A required amount in minor units (a whole JSON number, as the platform sends them). */
function minorUnits(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new WebhookParseError(`${what} is not a whole number`);
  }
  return value;
}

/**
 * A Checkout Session as the `checkout.session.*` events and the API's session list both give it (the
 * same object; the list can expand its `line_items`): the one mapping of both
 * (src/webhooks/payments-c-orders.ts reads the list). `path` names the session in error messages.
 * Which organisation it belongs to is the caller's: an event names it, a list is the integration's.
 */
export function paymentsCSessionOrder(session: JsonObject, path: string): NormalizedOrder {
  const currency = currencyOf(session.currency);
  const details = objectAt(session.customer_details);
  const paymentReference = paymentIntentId(session.payment_intent);
  return {
    externalOrderId: requireId(session.id, `${path}.id`),
    customer: {
      email: firstText(details?.email, session.customer_email),
      name: text(details?.name),
    },
    currency,
    lines: sessionLines(session, currency),
    paid: typeof session.payment_status === 'string' && PAID_STATUSES.has(session.payment_status),
    test: session.livemode === false,
    // Null when the session itself took no payment (nothing due, subscription mode): a refund
    // or dispute can then not name this order.
    ...(paymentReference !== null ? { paymentReference } : {}),
  };
}

function parseOrder(event: JsonObject): ParseResult {
  const order = paymentsCSessionOrder(requireObject(objectAt(event.data)?.object, 'data.object'), 'data.object');
  return { kind: 'orders', orders: [{ ...order, test: order.test || event.livemode === false, ...routingFields(event) }] };
}

/**
 * `charge.refunded` (data.object is the Charge: a full refund only when `amount_refunded` reached
 * `amount`, anything less is a partial refund by amount) or `charge.dispute.created` (the Dispute,
 * which always takes the whole order back).
 */
function parseRevocation(event: JsonObject, type: typeof REFUND_EVENT | typeof DISPUTE_EVENT): ParseResult {
  const object = requireObject(objectAt(event.data)?.object, 'data.object');
  let scope: RevocationScope = { kind: 'order' };
  if (type === REFUND_EVENT) {
    const refunded = minorUnits(object.amount_refunded, 'data.object.amount_refunded');
    if (refunded !== minorUnits(object.amount, 'data.object.amount')) scope = partialRefund();
  }
  const paymentReference = paymentIntentId(object.payment_intent);
  // A charge made without a PaymentIntent (legacy Charges API) was not a checkout session of ours.
  if (paymentReference === null) return { kind: 'ignored', reason: `${type} names no payment_intent` };
  const eventId = text(event.id);

  return {
    kind: 'revocations',
    revocations: [
      {
        event: type === DISPUTE_EVENT ? 'dispute' : 'refund',
        order: { paymentReference },
        scope,
        ...routingFields(event),
        ...(eventId !== null ? { eventId } : {}),
      },
    ],
  };
}

/**
 * Read before verification, only to choose whose secret to check (the path names no
 * organisation). Throws WebhookParseError when the body is not a JSON object.
 */
export function paymentsCRouting(request: WebhookRequest): SharedRoute {
  return sharedRouteOf(jsonObjectBody(request));
}

export const paymentsC: PlatformAdapter<'payments-c'> = {
  platform: 'payments-c',
  contentTypes: ['application/json'],
  secretField: { field: 'secret', label: 'Signing secret' },
  routing: {
    kind: 'shared',
    routeOf: paymentsCRouting,
    accountIdHint: 'Optional: routes events that carry no org_id.',
  },
  setupNote: 'one URL for every organisation: events name the organisation in metadata.org_id or by the registered accountId',

  verify(request, secrets, now) {
    return verify(request, configured(secrets.secret), now);
  },

  parse(request) {
    const event = jsonObjectBody(request);
    if (typeof event.type !== 'string') throw new WebhookParseError('type is missing or not a string');
    if (ORDER_EVENTS.has(event.type)) return parseOrder(event);
    if (event.type === REFUND_EVENT || event.type === DISPUTE_EVENT) return parseRevocation(event, event.type);
    return { kind: 'ignored', reason: `event type ${event.type} is not an order` };
  },
};
