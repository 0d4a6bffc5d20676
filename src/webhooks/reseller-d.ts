/**
 * reseller-d (FastSpring-style `{events:[...]}` batch). Signature: base64 HMAC-SHA256 of the whole raw
 * body, header `X-RD-Signature` (alias `X-FS-Signature`). One order per `order.completed` event,
 * one refund per `return.created` event (decisions §9).
 *
 * Amounts: `items[].subtotal` is a JSON number (29.0). It is written through its shortest round-trip
 * text and the currency's minor digits ("29.00"), never through float arithmetic (see decimalAmount).
 */
import type { NormalizedLine, NormalizedOrder, NormalizedRevocation, PlatformAdapter } from './adapter';
import {
  currencyOf,
  decimalAmount,
  firstText,
  joinName,
  jsonObjectBody,
  objectAt,
  quantityOf,
  requireArray,
  requireId,
  requireObject,
  text,
  type JsonObject,
} from './fields';
import { partialRefund } from './revocation';
import { configured, verifyBase64Hmac } from './signature';

export const RESELLER_D_HEADERS = ['x-rd-signature', 'x-fs-signature'];

/**
 * An order as the platform's `order.completed` webhook (its `data`) and its API's order list
 * (`GET /orders`) both give it (the same object): the one mapping of both
 * (src/webhooks/reseller-d-orders.ts reads the list). Paid unless the order says it is not completed
 * (failed, declined or pending); a test order says `live: false`.
 */
export function resellerDOrder(data: JsonObject, where: string): NormalizedOrder {
  const externalOrderId = requireId(data.id, `${where}.id`);
  const currency = currencyOf(data.currency);
  const customer = objectAt(data.customer);
  const contact = objectAt(objectAt(data.account)?.contact);

  const lines = requireArray(data.items, `${where}.items`).map((value, index): NormalizedLine => {
    const item = requireObject(value, `${where}.items[${index}]`);
    return {
      sku: firstText(item.sku, item.product),
      quantity: quantityOf(item.quantity, `${where}.items[${index}].quantity`),
      amount: decimalAmount(item.subtotal, currency),
    };
  });

  return {
    externalOrderId,
    customer: {
      email: firstText(customer?.email, contact?.email),
      name: joinName(customer?.first, customer?.last) ?? joinName(contact?.first, contact?.last),
    },
    currency,
    lines,
    paid: data.completed !== false,
    test: data.live === false,
  };
}

function orderOf(event: JsonObject, where: string): NormalizedOrder {
  const order = resellerDOrder(requireObject(event.data, `${where}.data`), `${where}.data`);
  return event.live === false ? { ...order, test: true } : order;
}

/**
 * A return: `data.original` is the order it takes back (`id`, also sent as `order`, is the order id
 * that `order.completed` sent as `data.id`), `data.items[]` the returned items, named like the
 * order's lines. A return naming no item gives money back by amount only, so it revokes nothing.
 */
function revocationOf(event: JsonObject, where: string): NormalizedRevocation {
  const data = requireObject(event.data, `${where}.data`);
  const original = requireObject(data.original, `${where}.data.original`);
  const externalOrderId = requireId(original.id ?? original.order, `${where}.data.original.id`);
  const skus = requireArray(data.items, `${where}.data.items`).map((value, index) => {
    const item = requireObject(value, `${where}.data.items[${index}]`);
    return firstText(item.sku, item.product);
  });
  const eventId = text(event.id);
  return {
    event: 'refund',
    order: { externalOrderId },
    scope: skus.length === 0 ? partialRefund() : { kind: 'lines', skus },
    ...(eventId !== null ? { eventId } : {}),
  };
}

export const resellerD: PlatformAdapter<'reseller-d'> = {
  platform: 'reseller-d',
  contentTypes: ['application/json'],
  secretField: { field: 'secret', label: 'Signature secret' },
  routing: { kind: 'per-organisation' },
  setupNote: null,

  verify(request, secrets) {
    return verifyBase64Hmac(request, configured(secrets.secret), RESELLER_D_HEADERS);
  },

  parse(request) {
    const body = jsonObjectBody(request);
    const orders: NormalizedOrder[] = [];
    const returns: Array<{ event: JsonObject; where: string }> = [];
    requireArray(body.events, 'events').forEach((value, index) => {
      const event = requireObject(value, `events[${index}]`);
      if (event.type === 'order.completed') orders.push(orderOf(event, `events[${index}]`));
      else if (event.type === 'return.created') returns.push({ event, where: `events[${index}]` });
    });
    // The platform counts a 200 as every event of the batch processed: none may be left out.
    const revocations = returns.map(({ event, where }) => revocationOf(event, where));
    if (orders.length > 0 && revocations.length > 0) return { kind: 'mixed', orders, revocations };
    if (orders.length > 0) return { kind: 'orders', orders };
    if (revocations.length > 0) return { kind: 'revocations', revocations };
    return { kind: 'ignored', reason: 'no order.completed or return.created event in the batch' };
  },
};
