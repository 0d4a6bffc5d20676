import { WebhookParseError } from '../../../src/webhooks/adapter';
import { resellerD } from '../../../src/webhooks/reseller-d';
import { signFor } from '../../fixtures/platforms';
import { webhookSample } from '../../fixtures/samples';
import {
  edited,
  editedBody,
  expectOnlyParseErrors,
  fixture,
  fixtureJson,
  flipped,
  onlyOrder,
  onlyRevocation,
  ordersOf,
  request,
  revocationsOf,
  sampleOrder,
} from './support';

const SECRET = 'test-secret-reseller-d';
const VECTOR = 'qqcLf6rtepIdgi47u8flYDIaC6sTg8H3J/egoITzKac=';
const now = new Date();
const body = fixture('reseller-d.json');

type Json = Record<string, unknown>;
const firstEvent = (b: Json): Json => (b.events as Json[])[0];
const dataOf = (b: Json): Json => firstEvent(b).data as Json;

describe('reseller-d verify', () => {
  it('accepts the documented vector under the platform alias and the spec header', () => {
    expect(body.length).toBe(3683);
    expect(resellerD.verify(request(body, { 'x-fs-signature': VECTOR }), { secret: SECRET }, now)).toBe('verified');
    expect(resellerD.verify(request(body, { 'x-rd-signature': VECTOR }), { secret: SECRET }, now)).toBe('verified');
    // Header case varies on this platform; a non-lower-cased key is still found.
    expect(resellerD.verify(request(body, { 'X-FS-Signature': VECTOR }), { secret: SECRET }, now)).toBe('verified');
  });

  it('refuses a flipped byte, a wrong secret, a missing header or secret', () => {
    const headers = { 'x-rd-signature': VECTOR };
    expect(resellerD.verify(request(flipped(body, 3000), headers), { secret: SECRET }, now)).toBe('signature mismatch');
    expect(resellerD.verify(request(body, headers), { secret: 'wrong' }, now)).toBe('signature mismatch');
    expect(resellerD.verify(request(body, {}), { secret: SECRET }, now)).toBe('signature header missing');
    expect(resellerD.verify(request(body, headers), { secret: undefined }, now)).toBe('signature mismatch');
  });

  it('accepts a body re-signed with the test helper', () => {
    const raw = edited('reseller-d.json', (b) => (firstEvent(b).live = false));
    const signed = signFor('reseller-d', raw, { secret: SECRET });
    expect(resellerD.verify(request(raw, signed.headers), { secret: SECRET }, now)).toBe('verified');
  });
});

describe('reseller-d parse', () => {
  it('parses the sample', () => {
    expect(onlyOrder(resellerD.parse(request(body)))).toEqual(sampleOrder('nZ3xQ7rLTy2kP9vBcW4mHg'));
  });

  it('gives one order per order.completed event of a batch and skips other events', () => {
    const sample = fixtureJson('reseller-d.json');
    const event = firstEvent(sample);
    const second = JSON.parse(JSON.stringify(event)) as Json;
    (second.data as Json).id = 'second-order';
    second.live = false;
    const raw = JSON.stringify({
      events: [event, { id: 'x', type: 'subscription.activated', data: {} }, second],
    });
    const orders = ordersOf(resellerD.parse(request(raw)));
    expect(orders.map((o) => [o.externalOrderId, o.test])).toEqual([
      ['nZ3xQ7rLTy2kP9vBcW4mHg', false],
      ['second-order', true],
    ]);
  });

  it('is ignored when no event is an order', () => {
    expect(resellerD.parse(request('{"events":[{"type":"subscription.activated","data":{}}]}')).kind).toBe('ignored');
    expect(resellerD.parse(request('{"events":[]}')).kind).toBe('ignored');
  });

  it('falls back to the product path and to account.contact; data.live false is test', () => {
    const raw = edited('reseller-d.json', (b) => {
      const data = dataOf(b);
      delete data.customer;
      data.live = false;
      for (const item of data.items as Json[]) item.sku = null;
    });
    const order = onlyOrder(resellerD.parse(request(raw)));
    expect(order.lines.map((l) => l.sku)).toEqual(['ebook-pro', 'course-basic']);
    expect(order.customer).toEqual({ email: 'buyer@example.com', name: 'Sam Buyer' });
    expect(order.test).toBe(true);
  });

  it('has null customer fields when account is an id string and there is no customer', () => {
    const raw = edited('reseller-d.json', (b) => {
      const data = dataOf(b);
      delete data.customer;
      data.account = 'hT5kLm2NqRs8uVw1xYz3Ab';
    });
    expect(onlyOrder(resellerD.parse(request(raw))).customer).toEqual({ email: null, name: null });
  });

  it('writes numeric subtotals without float artefacts', () => {
    const raw = Buffer.from(
      '{"events":[{"type":"order.completed","live":true,"data":{"id":"o1","currency":"usd","customer":{"first":"A","last":"B","email":" a@b.c "},' +
        '"items":[{"product":"p1","quantity":3,"subtotal":59.97},{"product":"p2","quantity":1,"subtotal":0.1},' +
        '{"product":"p3","quantity":1,"subtotal":29.0},{"product":"p4","quantity":1,"subtotal":"12.5"},{"product":"p5","quantity":1,"subtotal":1.005}]}}]}',
    );
    const order = onlyOrder(resellerD.parse(request(raw)));
    expect(order.customer.email).toBe('a@b.c');
    // 1.005 has more precision than USD allows: unknown rather than silently rounded.
    expect(order.lines.map((l) => l.amount)).toEqual(['59.97', '0.10', '29.00', '12.50', null]);
    const jpy = raw.toString().replace('"usd"', '"JPY"').replace('29.0', '2900');
    expect(onlyOrder(resellerD.parse(request(jpy))).lines[2].amount).toBe('2900');
  });

  it('reads a pretty-printed body with escapes', () => {
    const raw = JSON.stringify(
      { events: [{ type: 'order.completed', data: { id: 'o/2', currency: 'EUR', items: [{ product: 'p', subtotal: 5 }] } }] },
      null,
      4,
    ).replace('"o/2"', '"o\\/\\u0032"');
    expect(onlyOrder(resellerD.parse(request(raw)))).toMatchObject({
      externalOrderId: 'o/2',
      currency: 'EUR',
      lines: [{ sku: 'p', quantity: 1, amount: '5.00' }],
      test: false,
    });
  });

  it('throws WebhookParseError on unreadable bodies', () => {
    for (const raw of ['', '{}', '{"events":{}}', '{"events":[1]}', '{"events":[{"type":"order.completed"}]}',
      '{"events":[{"type":"order.completed","data":{"items":[]}}]}', '{"events":[{"type":"order.completed","data":{"id":"x"}}]}']) {
      expect(() => resellerD.parse(request(raw))).toThrow(WebhookParseError);
    }
  });

  it('never throws another error type', () => {
    expectOnlyParseErrors(resellerD, body);
  });
});

describe('reseller-d returns (return.created)', () => {
  const returned = webhookSample('reseller-d.return.json');
  const returnEvent = (): Json => firstEvent(JSON.parse(returned.toString('utf8')) as Json);

  it('names the original order and the returned items', () => {
    expect(onlyRevocation(resellerD.parse(request(returned)))).toEqual({
      event: 'refund',
      order: { externalOrderId: 'nZ3xQ7rLTy2kP9vBcW4mHg' },
      scope: { kind: 'lines', skus: ['ebook-pro', 'course-basic'] },
      eventId: 'wX7mQp3RtZ9kLb2nVc5sHd',
    });
  });

  it('falls back to the product path, and to original.order', () => {
    const raw = editedBody(returned, (b) => {
      const data = dataOf(b);
      delete (data.original as Json).id;
      (data.items as Json[])[0].sku = null;
      data.items = [(data.items as Json[])[0]];
    });
    expect(onlyRevocation(resellerD.parse(request(raw)))).toEqual({
      event: 'refund',
      order: { externalOrderId: 'nZ3xQ7rLTy2kP9vBcW4mHg' },
      scope: { kind: 'lines', skus: ['ebook-pro'] },
      eventId: 'wX7mQp3RtZ9kLb2nVc5sHd',
    });
  });

  it('revokes nothing for a return that names no item', () => {
    const raw = editedBody(returned, (b) => (dataOf(b).items = []));
    expect(onlyRevocation(resellerD.parse(request(raw))).scope).toEqual({ kind: 'none', reason: 'partial refund, access kept' });
  });

  it('gives one refund per return.created event of a batch, in order, and skips other events', () => {
    const second = returnEvent();
    ((second.data as Json).original as Json).id = 'second-order';
    const raw = JSON.stringify({ events: [returnEvent(), { type: 'subscription.deactivated', data: {} }, second] });
    expect(revocationsOf(resellerD.parse(request(raw))).map((r) => r.order)).toEqual([
      { externalOrderId: 'nZ3xQ7rLTy2kP9vBcW4mHg' },
      { externalOrderId: 'second-order' },
    ]);
  });

  it('keeps both the orders and the returns of a batch that mixes them', () => {
    const raw = JSON.stringify({ events: [returnEvent(), firstEvent(fixtureJson('reseller-d.json'))] });
    const result = resellerD.parse(request(raw));
    if (result.kind !== 'mixed') throw new Error(`expected mixed, got ${result.kind}`);
    expect(result.orders.map((o) => o.externalOrderId)).toEqual(['nZ3xQ7rLTy2kP9vBcW4mHg']);
    expect(result.revocations.map((r) => r.order)).toEqual([{ externalOrderId: 'nZ3xQ7rLTy2kP9vBcW4mHg' }]);
  });

  it('is signed like an order', () => {
    const signed = signFor('reseller-d', returned, { secret: SECRET });
    expect(resellerD.verify(request(returned, signed.headers), { secret: SECRET }, now)).toBe('verified');
  });

  it('throws WebhookParseError on unreadable returns, naming the event', () => {
    const batch = (data: unknown) => JSON.stringify({ events: [{ type: 'subscription.deactivated' }, { type: 'return.created', data }] });
    for (const raw of [batch(undefined), batch({ items: [] }), batch({ original: {}, items: [] }), batch({ original: { id: 'o' } }),
      batch({ original: { id: 'o' }, items: {} }), batch({ original: { id: 'o' }, items: [7] })]) {
      expect(() => resellerD.parse(request(raw))).toThrow(/^events\[1\]\.data/);
    }
    expect(() => resellerD.parse(request(batch(undefined)))).toThrow(WebhookParseError);
  });

  it('never throws another error type', () => {
    expectOnlyParseErrors(resellerD, returned);
  });
});
