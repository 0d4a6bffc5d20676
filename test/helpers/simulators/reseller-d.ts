/**
 * A local stand-in for reseller-d's (FastSpring's) order list, a real HTTP server on 127.0.0.1,
 * modelled on the documented behaviour (sources in test/fixtures/webhooks/README.md, §10):
 *
 * - `GET /orders?begin=yyyy-mm-dd&end=yyyy-mm-dd&limit=…&page=…&scope=all|live|test`: orders whose
 *   date is on or after `begin` and before `end` (UTC days here), `begin` at least one day before
 *   `end` (else 400); `limit` default 50, `page` from 1; `scope` default live.
 * - The answer: `{action: "order.lookup", result: "success", begin, end, page, limit, nextPage, total,
 *   orders: [id…]}`, `nextPage` null on the last page. Like FastSpring's other lists (`GET
 *   /subscriptions`), it names the orders by id only; `fullOrders` makes it carry the order objects
 *   instead, for a client that must take either.
 * - `GET /orders/{id1},{id2},…`: the orders themselves, each the object the `order.completed` webhook
 *   carries as `data`; one id answers the bare object, several an `{orders: […]}` array. An id the
 *   store does not know (`forget`) answers `{order, result: "error", error: {order: "Not found"}}` in
 *   the array.
 * - HTTP Basic with the store's API username and password, else 401.
 * - On a chosen page of the list, once: 429 with `Retry-After`.
 */
import { webhookSample } from '../../fixtures/samples';
import { startOrderListServer, type OrderListServer } from './order-list-server';

const DEFAULT_LIMIT = 50;
const DAY_MS = 86_400_000;

export interface SimulatedOrder {
  id: string;
  email: string;
  updatedAt: Date;
  completed?: boolean;
  live?: boolean;
}

export interface ResellerDSimulatorOptions {
  username?: string;
  password?: string;
  /** The list carries the order objects instead of their ids. */
  fullOrders?: boolean;
}

export interface ResellerDSimulator extends Pick<OrderListServer, 'origin' | 'requests' | 'throttleOnce' | 'revokeToken' | 'close'> {
  username: string;
  password: string;
  /** Lookups by id no longer find the order (the list still names it). */
  forget(id: string): void;
  /** The id lists of the lookups answered, in order. */
  lookups: string[][];
  /** The order as the platform's API gives it (and its webhook as `data`): the sample's with the order's id, email and times. */
  orderJson(order: SimulatedOrder): string;
  /** The `order.completed` webhook batch carrying the order. */
  webhookJson(order: SimulatedOrder): string;
}

type SampleOrder = Record<string, unknown> & { items: unknown[]; customer: object; account: { contact: object } };

function sampleEvent(): Record<string, unknown> & { data: SampleOrder } {
  const batch = JSON.parse(webhookSample('reseller-d.json').toString('utf8')) as { events: Array<Record<string, unknown> & { data: SampleOrder }> };
  return batch.events[0];
}

/** The reseller-d sample's order, one item (ebook-pro), with the order's id, email, completion and change time. */
function orderOf(order: SimulatedOrder): SampleOrder {
  const data = sampleEvent().data;
  const changed = order.updatedAt.getTime();
  return {
    ...data,
    order: order.id,
    id: order.id,
    reference: `ACME${order.id.slice(-10)}`,
    completed: order.completed ?? true,
    live: order.live ?? true,
    changed,
    changedValue: changed,
    changedInSeconds: Math.floor(changed / 1000),
    changedDisplay: new Date(changed).toLocaleDateString('en-US', { timeZone: 'UTC' }),
    customer: { ...data.customer, email: order.email },
    account: { ...data.account, contact: { ...data.account.contact, email: order.email } },
    total: 29.0,
    subtotal: 29.0,
    items: [data.items[0]],
  };
}

function webhookJsonOf(order: SimulatedOrder): string {
  const event = sampleEvent();
  return JSON.stringify({ events: [{ ...event, id: `evt-${order.id}`, live: order.live ?? true, data: orderOf(order) }] });
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

export async function startResellerDSimulator(orders: SimulatedOrder[], options: ResellerDSimulatorOptions = {}): Promise<ResellerDSimulator> {
  const { username = 'RD_API_USER_SIMULATED', password = 'rd-simulated-api-password', fullOrders = false } = options;
  const sorted = [...orders].sort((a, b) => a.updatedAt.getTime() - b.updatedAt.getTime() || a.id.localeCompare(b.id));
  const known = new Map(sorted.map((o) => [o.id, o]));
  const lookups: string[][] = [];
  const expected = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;

  const server = await startOrderListServer(({ headers, url, revoked, answer, takeThrottle }) => {
    const lookup = /^\/orders\/([^/]+)$/.exec(url.pathname);
    if (url.pathname !== '/orders' && !lookup) return answer(404, { action: 'order.lookup', result: 'error', error: { orders: 'Not found' } });
    if (revoked || headers.authorization !== expected) return answer(401, { action: 'order.lookup', result: 'error', error: { authorization: 'Unauthorized' } });
    if (lookup) {
      const ids = lookup[1].split(',').map(decodeURIComponent);
      lookups.push(ids);
      const found = ids.map((id) => {
        const order = known.get(id);
        return order ? orderOf(order) : { order: id, action: 'order.get', result: 'error', error: { order: 'Not found' } };
      });
      return answer(200, ids.length === 1 && known.has(ids[0]) ? found[0] : { orders: found });
    }
    const begin = url.searchParams.get('begin') ?? '';
    const end = url.searchParams.get('end') ?? '';
    if (!DATE.test(begin) || !DATE.test(end) || Date.parse(end) - Date.parse(begin) < DAY_MS) {
      return answer(400, { action: 'order.lookup', result: 'error', error: { begin: 'begin must be at least one day before end' } });
    }
    const limit = Number(url.searchParams.get('limit') ?? DEFAULT_LIMIT);
    const page = Number(url.searchParams.get('page') ?? 1);
    const throttled = takeThrottle(page - 1);
    if (throttled !== undefined) return answer(429, { action: 'order.lookup', result: 'error', error: { request: 'Too many requests' } }, { 'retry-after': String(throttled) }, page - 1);
    const scope = url.searchParams.get('scope') ?? 'live';
    const matching = sorted.filter((o) => {
      const at = o.updatedAt.getTime();
      const live = o.live ?? true;
      return at >= Date.parse(begin) && at < Date.parse(end) && (scope === 'all' || (scope === 'test') !== live);
    });
    const slice = matching.slice((page - 1) * limit, page * limit);
    const nextPage = page * limit < matching.length ? page + 1 : null;
    answer(200, {
      action: 'order.lookup', result: 'success', begin, end, page, limit, nextPage, total: matching.length,
      orders: slice.map((o) => (fullOrders ? orderOf(o) : o.id)),
    }, {}, page - 1);
  });

  return {
    origin: server.origin,
    requests: server.requests,
    throttleOnce: server.throttleOnce,
    revokeToken: server.revokeToken,
    close: server.close,
    username,
    password,
    forget: (id) => {
      known.delete(id);
    },
    lookups,
    orderJson: (order) => JSON.stringify(orderOf(order)),
    webhookJson: webhookJsonOf,
  };
}
