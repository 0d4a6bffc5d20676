import { createHmac } from 'node:crypto';
import { WebhookParseError } from '../../../src/webhooks/adapter';
import { parseSignatureHeader, paymentsC, paymentsCRouting } from '../../../src/webhooks/payments-c';
import { signFor } from '../../fixtures/platforms';
import { webhookSample } from '../../fixtures/samples';
import { edited, editedBody, expectOnlyParseErrors, fixture, fixtureJson, flipped, onlyOrder, onlyRevocation, request } from './support';

const SECRET = 'whsec_test_secret_payments_c';
const T = 1767262500;
const V1 = '2958d3a282b0c6ac299f2f91e6ca26810425328c805127f2cc9e34d5bd3343a5';
const now = new Date(T * 1000 + 10_000);
const body = fixture('payments-c.json');

function sign(raw: Buffer, t: number, secret = SECRET): string {
  return createHmac('sha256', secret).update(`${t}.`).update(raw).digest('hex');
}

type Json = Record<string, unknown>;
const session = (b: Json): Json => (b.data as Json).object as Json;

describe('payments-c verify', () => {
  it('accepts the documented vector with the clock at t + 10 s, under both header names', () => {
    expect(body.length).toBe(2853);
    const value = `t=${T},v1=${V1}`;
    expect(paymentsC.verify(request(body, { 'stripe-signature': value }), { secret: SECRET }, now)).toBe('verified');
    expect(paymentsC.verify(request(body, { 'paymentsc-signature': value }), { secret: SECRET }, now)).toBe('verified');
  });

  it('accepts any of several v1 values (secret rotation) and ignores v0 and unknown keys', () => {
    const old = sign(body, T, 'whsec_old');
    expect(paymentsC.verify(request(body, { 'paymentsc-signature': `t=${T},v1=${old},v1=${V1},v0=abc,x=1` }), { secret: SECRET }, now)).toBe('verified');
    expect(paymentsC.verify(request(body, { 'paymentsc-signature': `t=${T}, v1=${V1}, v1=${old}` }), { secret: SECRET }, now)).toBe('verified');
    expect(paymentsC.verify(request(body, { 'paymentsc-signature': `t=${T},v1=${old}` }), { secret: 'whsec_old' }, now)).toBe('verified');
    expect(paymentsC.verify(request(body, { 'paymentsc-signature': `t=${T},v0=${V1}` }), { secret: SECRET }, now)).toBe('signature mismatch');
  });

  it('names stale and far-future timestamps, and the vector at the real clock, outside tolerance', () => {
    const value = `t=${T},v1=${V1}`;
    const at = (seconds: number) => new Date((T + seconds) * 1000);
    expect(paymentsC.verify(request(body, { 'paymentsc-signature': value }), { secret: SECRET }, at(300))).toBe('verified');
    expect(paymentsC.verify(request(body, { 'paymentsc-signature': value }), { secret: SECRET }, at(301))).toBe('timestamp outside tolerance');
    expect(paymentsC.verify(request(body, { 'paymentsc-signature': value }), { secret: SECRET }, at(-300))).toBe('verified');
    expect(paymentsC.verify(request(body, { 'paymentsc-signature': value }), { secret: SECRET }, at(-301))).toBe('timestamp outside tolerance');
    expect(paymentsC.verify(request(body, { 'paymentsc-signature': value }), { secret: SECRET }, new Date())).toBe('timestamp outside tolerance');
  });

  it('refuses a flipped byte, a wrong secret, a changed t, a missing header or secret, a malformed header', () => {
    const value = `t=${T},v1=${V1}`;
    expect(paymentsC.verify(request(flipped(body, 1000), { 'paymentsc-signature': value }), { secret: SECRET }, now)).toBe('signature mismatch');
    expect(paymentsC.verify(request(body, { 'paymentsc-signature': value }), { secret: 'whsec_other' }, now)).toBe('signature mismatch');
    expect(paymentsC.verify(request(body, { 'paymentsc-signature': `t=${T + 1},v1=${V1}` }), { secret: SECRET }, now)).toBe('signature mismatch');
    expect(paymentsC.verify(request(body, {}), { secret: SECRET }, now)).toBe('signature header missing');
    expect(paymentsC.verify(request(body, { 'paymentsc-signature': value }), {}, now)).toBe('signature mismatch');
    for (const bad of [V1, `v1=${V1}`, `t=,v1=${V1}`, `t=abc,v1=${V1}`, `t=${T}`, `t=${T},v1=`, ',,,']) {
      expect(paymentsC.verify(request(body, { 'paymentsc-signature': bad }), { secret: SECRET }, now)).toBe('signature mismatch');
    }
    expect(paymentsC.verify(request(body, { 'paymentsc-signature': '' }), { secret: SECRET }, now)).toBe('signature header missing');
  });

  it('names a stale timestamp only when a signature over it matches', () => {
    const late = new Date((T + 3600) * 1000);
    expect(paymentsC.verify(request(body, { 'paymentsc-signature': `t=${T},v1=${V1}` }), { secret: SECRET }, late)).toBe('timestamp outside tolerance');
    expect(paymentsC.verify(request(body, { 'paymentsc-signature': `t=${T},v1=${V1}` }), { secret: 'whsec_other' }, late)).toBe('signature mismatch');
    expect(paymentsC.verify(request(flipped(body, 10), { 'paymentsc-signature': `t=${T},v1=${V1}` }), { secret: SECRET }, late)).toBe('signature mismatch');
  });

  it('parses the header pairs', () => {
    expect(parseSignatureHeader(`t=${T},v1=a,v0=b,v1=c`)).toEqual({ timestamp: T, signatures: ['a', 'c'] });
  });

  it('accepts a body re-signed with the test helper at the current time', () => {
    const raw = edited('payments-c.json', (b) => (b.livemode = false));
    const secrets = { secret: 'whsec_another' };
    const signed = signFor('payments-c', raw, secrets);
    expect(paymentsC.verify(request(raw, signed.headers), secrets, new Date())).toBe('verified');
    const old = signFor('payments-c', raw, secrets, Math.floor(Date.now() / 1000) - 301);
    expect(paymentsC.verify(request(raw, old.headers), secrets, new Date())).toBe('timestamp outside tolerance');
  });
});

describe('payments-c parse', () => {
  it('parses the sample: SKUs from metadata.skus, amounts unknown per line', () => {
    expect(onlyOrder(paymentsC.parse(request(body)))).toEqual({
      externalOrderId: 'cs_live_a1ExampleCheckoutSession0001payC',
      customer: { email: 'buyer@example.com', name: 'Sam Buyer' },
      currency: 'USD',
      lines: [
        { sku: 'ebook-pro', quantity: 1, amount: null },
        { sku: 'course-basic', quantity: 1, amount: null },
      ],
      paid: true,
      test: false,
      paymentReference: 'pi_3QpLiveExamplePayIntent01',
    });
  });

  it('keeps the payment_intent as paymentReference, also when expanded; none when the session has none', () => {
    const expanded = edited('payments-c.json', (b) => (session(b).payment_intent = { id: 'pi_expanded', object: 'payment_intent' }));
    expect(onlyOrder(paymentsC.parse(request(expanded))).paymentReference).toBe('pi_expanded');
    for (const value of [null, '', '  ', { id: null }, undefined]) {
      const raw = edited('payments-c.json', (b) => (session(b).payment_intent = value));
      expect(onlyOrder(paymentsC.parse(request(raw)))).not.toHaveProperty('paymentReference');
    }
  });

  it('carries org_id and the connected account', () => {
    const raw = edited('payments-c.json', (b) => {
      b.account = 'acct_123';
      (session(b).metadata as Json).org_id = 'org-42';
    });
    const order = onlyOrder(paymentsC.parse(request(raw)));
    expect(order.orgId).toBe('org-42');
    expect(order.accountId).toBe('acct_123');
  });

  it('uses amount_total for a single SKU (metadata.sku), in minor units', () => {
    const raw = edited('payments-c.json', (b) => {
      session(b).metadata = { sku: 'ebook-pro' };
      session(b).amount_total = 2900;
    });
    expect(onlyOrder(paymentsC.parse(request(raw))).lines).toEqual([{ sku: 'ebook-pro', quantity: 1, amount: '29.00' }]);
    const jpy = edited('payments-c.json', (b) => {
      session(b).metadata = { skus: ' ebook-pro , ' };
      session(b).currency = 'jpy';
      session(b).amount_total = 500;
    });
    const order = onlyOrder(paymentsC.parse(request(jpy)));
    expect(order.currency).toBe('JPY');
    expect(order.lines).toEqual([{ sku: 'ebook-pro', quantity: 1, amount: '500' }]);
  });

  it.each([
    // Its API departs from ISO 4217 here: ISK stays two-decimal (100 = 1 króna), MGA is zero-decimal.
    ['isk', 290_000, '2900'],
    ['mga', 290_000, '290000.00'],
    ['huf', 290_000, '2900.00'],
    ['kwd', 29_000, '29.000'],
  ])('reads %s amounts in its API\'s minor units (%d → %s)', (currency, minor, amount) => {
    const raw = edited('payments-c.json', (b) => {
      session(b).metadata = { sku: 'ebook-pro' };
      session(b).currency = currency;
      session(b).amount_total = minor;
    });
    expect(onlyOrder(paymentsC.parse(request(raw))).lines).toEqual([{ sku: 'ebook-pro', quantity: 1, amount }]);
  });

  it('reads SKUs from expanded line_items (lookup_key, else price.metadata.sku)', () => {
    const lineItems = fixtureJson('payments-c.line_items.json');
    const items = lineItems.data as Json[];
    (items[1].price as Json).lookup_key = null;
    const raw = edited('payments-c.json', (b) => {
      session(b).metadata = {};
      session(b).line_items = lineItems;
    });
    expect(onlyOrder(paymentsC.parse(request(raw))).lines).toEqual([
      { sku: 'ebook-pro', quantity: 1, amount: '29.00' },
      { sku: 'course-basic', quantity: 1, amount: '49.00' },
    ]);
  });

  it('gives one line without SKU when the session names none', () => {
    const raw = edited('payments-c.json', (b) => (session(b).metadata = {}));
    expect(onlyOrder(paymentsC.parse(request(raw))).lines).toEqual([{ sku: null, quantity: 1, amount: '78.00' }]);
  });

  it('marks test mode, unpaid sessions, and accepts async_payment_succeeded', () => {
    const test = edited('payments-c.json', (b) => (b.livemode = false));
    expect(onlyOrder(paymentsC.parse(request(test))).test).toBe(true);
    const unpaid = edited('payments-c.json', (b) => (session(b).payment_status = 'unpaid'));
    expect(onlyOrder(paymentsC.parse(request(unpaid))).paid).toBe(false);
    const free = edited('payments-c.json', (b) => (session(b).payment_status = 'no_payment_required'));
    expect(onlyOrder(paymentsC.parse(request(free))).paid).toBe(true);
    const later = edited('payments-c.json', (b) => (b.type = 'checkout.session.async_payment_succeeded'));
    expect(onlyOrder(paymentsC.parse(request(later))).externalOrderId).toBe('cs_live_a1ExampleCheckoutSession0001payC');
  });

  it('ignores other event types', () => {
    for (const type of ['checkout.session.expired', 'payment_intent.succeeded', 'charge.refund.updated', 'charge.dispute.closed', 'charge.succeeded']) {
      const raw = edited('payments-c.json', (b) => (b.type = type));
      expect(paymentsC.parse(request(raw))).toEqual({ kind: 'ignored', reason: `event type ${type} is not an order` });
    }
  });

  it('reads compact bodies with escapes and has null customer fields when details are missing', () => {
    const raw = String.raw`{"type":"checkout.session.completed","livemode":true,"data":{"object":{"id":"cs_test_\u0041\/1","currency":"usd","amount_total":1999,"payment_status":"paid","customer_details":null,"metadata":{"sku":"a\/b"}}}}`;
    expect(onlyOrder(paymentsC.parse(request(raw)))).toEqual({
      externalOrderId: 'cs_test_A/1',
      customer: { email: null, name: null },
      currency: 'USD',
      lines: [{ sku: 'a/b', quantity: 1, amount: '19.99' }],
      paid: true,
      test: false,
    });
  });

  it('throws WebhookParseError on unreadable bodies', () => {
    for (const raw of ['', 'x', '{}', '{"type":1}', '{"type":"checkout.session.completed"}',
      '{"type":"checkout.session.completed","data":{"object":{}}}',
      '{"type":"checkout.session.completed","data":{"object":{"id":"cs_1","line_items":{"data":[7]}}}}']) {
      expect(() => paymentsC.parse(request(raw))).toThrow(WebhookParseError);
    }
  });

  it('never throws another error type', () => {
    expectOnlyParseErrors(paymentsC, body);
  });
});

describe('payments-c refunds and disputes', () => {
  const fullRefund = webhookSample('payments-c.charge-refunded.json');
  const partialRefund = webhookSample('payments-c.charge-refunded-partial.json');
  const dispute = webhookSample('payments-c.dispute-created.json');
  const paymentReference = 'pi_3QpLiveExamplePayIntent01';
  /** data.object: here the Charge or the Dispute. */
  const dataObject = session;

  it('reads a full charge.refunded as a refund of the order paid with its payment_intent', () => {
    expect(onlyRevocation(paymentsC.parse(request(fullRefund)))).toEqual({
      event: 'refund',
      order: { paymentReference },
      scope: { kind: 'order' },
      eventId: 'evt_3QpLiveExampleRefund0001',
    });
  });

  it('revokes nothing for a partial refund (amount_refunded below amount)', () => {
    expect(onlyRevocation(paymentsC.parse(request(partialRefund)))).toEqual({
      event: 'refund',
      order: { paymentReference },
      scope: { kind: 'none', reason: 'partial refund, access kept' },
      eventId: 'evt_3QpLiveExampleRefund0002',
    });
    // The amounts decide, not the charge's own `refunded` flag.
    const flagOnly = editedBody(partialRefund, (b) => (dataObject(b).refunded = true));
    expect(onlyRevocation(paymentsC.parse(request(flagOnly))).scope.kind).toBe('none');
    const zeroDecimal = editedBody(fullRefund, (b) => {
      Object.assign(dataObject(b), { currency: 'jpy', amount: 500, amount_refunded: 500 });
    });
    expect(onlyRevocation(paymentsC.parse(request(zeroDecimal))).scope).toEqual({ kind: 'order' });
  });

  it('reads charge.dispute.created as a dispute of the whole order', () => {
    expect(onlyRevocation(paymentsC.parse(request(dispute)))).toEqual({
      event: 'dispute',
      order: { paymentReference },
      scope: { kind: 'order' },
      eventId: 'evt_1QpLiveExampleDispute01',
    });
  });

  it('reads an expanded payment_intent by its id', () => {
    for (const sample of [fullRefund, dispute]) {
      const raw = editedBody(sample, (b) => (dataObject(b).payment_intent = { id: 'pi_expanded', object: 'payment_intent', amount: 7800 }));
      expect(onlyRevocation(paymentsC.parse(request(raw))).order).toEqual({ paymentReference: 'pi_expanded' });
    }
  });

  it('ignores a charge or dispute without payment_intent: no checkout session paid it', () => {
    for (const [sample, type] of [[fullRefund, 'charge.refunded'], [dispute, 'charge.dispute.created']] as const) {
      for (const value of [null, '', { id: null }]) {
        const raw = editedBody(sample, (b) => (dataObject(b).payment_intent = value));
        expect(paymentsC.parse(request(raw))).toEqual({ kind: 'ignored', reason: `${type} names no payment_intent` });
      }
    }
  });

  it('carries org_id and the connected account, which also route the event', () => {
    for (const sample of [fullRefund, partialRefund, dispute]) {
      const raw = editedBody(sample, (b) => {
        b.account = 'acct_123';
        (dataObject(b).metadata as Json).org_id = 'org-42';
      });
      const revocation = onlyRevocation(paymentsC.parse(request(raw)));
      expect([revocation.orgId, revocation.accountId]).toEqual(['org-42', 'acct_123']);
      expect(paymentsCRouting(request(raw))).toEqual({ orgId: 'org-42', accountId: 'acct_123', paymentReference: 'pi_3QpLiveExamplePayIntent01' });
    }
    const plain = onlyRevocation(paymentsC.parse(request(dispute)));
    expect(plain).not.toHaveProperty('orgId');
    expect(plain).not.toHaveProperty('accountId');
  });

  it('is signed like an order', () => {
    const secrets = { secret: SECRET };
    for (const sample of [fullRefund, partialRefund, dispute]) {
      const signed = signFor('payments-c', sample, secrets);
      expect(paymentsC.verify(request(sample, signed.headers), secrets, new Date())).toBe('verified');
    }
  });

  it('throws WebhookParseError on unreadable refunds and disputes', () => {
    const refund = (object: Json) => JSON.stringify({ type: 'charge.refunded', data: { object: { payment_intent: 'pi_1', ...object } } });
    for (const raw of [
      '{"type":"charge.refunded"}',
      '{"type":"charge.dispute.created","data":{"object":"du_1"}}',
      refund({}),
      refund({ amount: 7800 }),
      refund({ amount: '7800', amount_refunded: 7800 }),
      refund({ amount: 7800, amount_refunded: 78.5 }),
      refund({ amount: 7800, amount_refunded: -1 }),
    ]) {
      expect(() => paymentsC.parse(request(raw))).toThrow(WebhookParseError);
    }
  });

  it('never throws another error type', () => {
    expectOnlyParseErrors(paymentsC, fullRefund);
    expectOnlyParseErrors(paymentsC, dispute);
  });
});
