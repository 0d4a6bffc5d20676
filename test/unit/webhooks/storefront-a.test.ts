import { storefrontA } from '../../../src/webhooks/storefront-a';
import { WebhookParseError } from '../../../src/webhooks/adapter';
import { signFor } from '../../fixtures/platforms';
import { webhookSample } from '../../fixtures/samples';
import { edited, editedBody, expectOnlyParseErrors, fixture, flipped, onlyOrder, onlyRevocation, request, sampleOrder } from './support';

const SECRET = 'test-secret-storefront-a';
const VECTOR = 'xrqVMWAHZ28kBKJOpOX69zxojxxlyo2hG4CmPIJ5XzE=';
const now = new Date();
const body = fixture('storefront-a.json');
const refund = webhookSample('storefront-a.refund.json');
const REFUND_TOPIC = { 'x-storefronta-topic': 'refunds/create' };

describe('storefront-a verify', () => {
  it('accepts the documented vector under the platform alias and the spec header', () => {
    expect(body.length).toBe(4590);
    expect(storefrontA.verify(request(body, { 'x-shopify-hmac-sha256': VECTOR }), { secret: SECRET }, now)).toBe('verified');
    expect(storefrontA.verify(request(body, { 'x-storefronta-hmac-sha256': VECTOR }), { secret: SECRET }, now)).toBe('verified');
    expect(storefrontA.verify(request(body, { 'x-storefronta-hmac-sha256': [VECTOR] }), { secret: SECRET }, now)).toBe('verified');
  });

  it('accepts the third-party vector', () => {
    const raw = '{"id":1234567890,"email":"customer@example.com","total_price":"123.45"}';
    const headers = { 'x-shopify-hmac-sha256': 'QNyObTlKbMx2qDlPF/ZOZcBqg5OgPg+2oky3zldc0Gw=' };
    expect(storefrontA.verify(request(raw, headers), { secret: 'test-webhook-secret' }, now)).toBe('verified');
  });

  it('refuses a flipped body byte, a wrong secret, a missing header or secret, a changed signature', () => {
    const headers = { 'x-storefronta-hmac-sha256': VECTOR };
    expect(storefrontA.verify(request(flipped(body, 100), headers), { secret: SECRET }, now)).toBe('signature mismatch');
    expect(storefrontA.verify(request(body, headers), { secret: 'other' }, now)).toBe('signature mismatch');
    expect(storefrontA.verify(request(body, {}), { secret: SECRET }, now)).toBe('signature header missing');
    expect(storefrontA.verify(request(body, headers), {}, now)).toBe('signature mismatch');
    expect(storefrontA.verify(request(body, headers), { secret: '' }, now)).toBe('signature mismatch');
    expect(storefrontA.verify(request(body, headers), { secret: null }, now)).toBe('signature mismatch');
    expect(storefrontA.verify(request(body, { 'x-storefronta-hmac-sha256': 'A' + VECTOR.slice(1) }), { secret: SECRET }, now)).toBe('signature mismatch');
    expect(storefrontA.verify(request(body, { 'x-storefronta-hmac-sha256': '' }), { secret: SECRET }, now)).toBe('signature header missing');
    // A newline added by a re-serialising proxy breaks the signature.
    expect(storefrontA.verify(request(Buffer.concat([body, Buffer.from('\n')]), headers), { secret: SECRET }, now)).toBe('signature mismatch');
  });

  it('accepts a body re-signed with the test helper', () => {
    const raw = edited('storefront-a.json', (b) => (b.test = true));
    const signed = signFor('storefront-a', raw, { secret: 'another-secret' });
    expect(storefrontA.verify(request(raw, signed.headers, signed.query), { secret: 'another-secret' }, now)).toBe('verified');
    expect(storefrontA.verify(request(raw, signed.headers, signed.query), { secret: SECRET }, now)).toBe('signature mismatch');
  });
});

describe('storefront-a parse', () => {
  it('parses the sample', () => {
    expect(onlyOrder(storefrontA.parse(request(body)))).toEqual(sampleOrder('5901000000001'));
  });

  it('keeps an id beyond 2^53 digit for digit, in a pretty-printed body with escapes', () => {
    const raw = Buffer.from(
      [
        '{',
        '  "id": 820982911946154508,',
        '  "email": "  j\\u00f6rg@example.com ",',
        '  "currency": "usd",',
        '  "financial_status": "paid",',
        '  "test": true,',
        '  "customer": null,',
        '  "billing_address": { "name": "J\\u00f6rg \\/ M\\u00fcller" },',
        '  "line_items": [',
        '    { "sku": "ebook\\/pro", "price": "19.99", "quantity": 3 },',
        '    { "sku": null, "price": "5.00", "quantity": 1 },',
        '    { "sku": "", "price": "5", "quantity": 2 }',
        '  ]',
        '}',
      ].join('\n'),
    );
    expect(onlyOrder(storefrontA.parse(request(raw)))).toEqual({
      externalOrderId: '820982911946154508',
      customer: { email: 'jörg@example.com', name: 'Jörg / Müller' },
      currency: 'USD',
      lines: [
        { sku: 'ebook/pro', quantity: 3, amount: '59.97' },
        { sku: null, quantity: 1, amount: '5.00' },
        { sku: null, quantity: 2, amount: '10.00' },
      ],
      paid: true,
      test: true,
    });
  });

  it('multiplies without float artefacts and respects zero-decimal currencies', () => {
    const raw = JSON.stringify({
      id: 1,
      currency: 'JPY',
      financial_status: 'paid',
      line_items: [{ sku: 'a', price: '500', quantity: 3 }],
    });
    expect(onlyOrder(storefrontA.parse(request(raw))).lines).toEqual([{ sku: 'a', quantity: 3, amount: '1500' }]);
    const usd = JSON.stringify({ id: 2, currency: 'USD', line_items: [{ sku: 'a', price: '0.10', quantity: 3 }] });
    expect(onlyOrder(storefrontA.parse(request(usd))).lines[0].amount).toBe('0.30');
  });

  it('marks unpaid orders and falls back to customer email and billing name', () => {
    const raw = edited('storefront-a.json', (b) => {
      b.financial_status = 'pending';
      delete b.email;
      (b.customer as Record<string, unknown>).first_name = null;
      (b.customer as Record<string, unknown>).last_name = null;
      (b.customer as Record<string, unknown>).email = 'other@Example.com';
      (b.billing_address as Record<string, unknown>).name = 'Billing Name';
    });
    const order = onlyOrder(storefrontA.parse(request(raw)));
    expect(order.paid).toBe(false);
    expect(order.customer).toEqual({ email: 'other@Example.com', name: 'Billing Name' });
  });

  it('is unpaid for refunded orders and not test unless test is exactly true', () => {
    const raw = edited('storefront-a.json', (b) => {
      b.financial_status = 'refunded';
      b.test = 'true';
    });
    const order = onlyOrder(storefrontA.parse(request(raw)));
    expect(order.paid).toBe(false);
    expect(order.test).toBe(false);
  });

  it('has null email and name when the customer data is redacted', () => {
    const raw = JSON.stringify({ id: 7, currency: 'USD', financial_status: 'paid', customer: null, line_items: [] });
    expect(onlyOrder(storefrontA.parse(request(raw))).customer).toEqual({ email: null, name: null });
  });

  it('throws WebhookParseError on unreadable bodies', () => {
    for (const raw of ['not json', '[]', '{}', '{"id":null,"line_items":[]}', '{"id":1}', '{"id":1,"line_items":[3]}',
      '{"id":1,"line_items":[{"quantity":"x"}]}', '{"id":1.5,"line_items":[]}']) {
      expect(() => storefrontA.parse(request(raw))).toThrow(WebhookParseError);
    }
  });

  it('never throws another error type', () => {
    expectOnlyParseErrors(storefrontA, body);
  });
});

describe('storefront-a refunds (topic refunds/create)', () => {
  it('names the order and the refunded lines: here one of the two', () => {
    expect(onlyRevocation(storefrontA.parse(request(refund, REFUND_TOPIC)))).toEqual({
      event: 'refund',
      order: { externalOrderId: '5901000000001' },
      scope: { kind: 'lines', skus: ['ebook-pro'] },
    });
  });

  it('reads the topic under the platform alias too, in any header case', () => {
    for (const headers of [{ 'x-shopify-topic': 'refunds/create' }, { 'X-Shopify-Topic': ['refunds/create'] }, { 'x-storefronta-topic': ' refunds/create ' }]) {
      expect(storefrontA.parse(request(refund, headers)).kind).toBe('revocations');
    }
  });

  it('revokes nothing for a refund without line items, empty or absent', () => {
    const partial = { event: 'refund', order: { externalOrderId: '5901000000001' }, scope: { kind: 'none', reason: 'partial refund, access kept' } };
    expect(onlyRevocation(storefrontA.parse(request(webhookSample('storefront-a.refund-no-lines.json'), REFUND_TOPIC)))).toEqual(partial);
    for (const value of [undefined, null]) {
      const raw = editedBody(refund, (b) => (b.refund_line_items = value));
      expect(onlyRevocation(storefrontA.parse(request(raw, REFUND_TOPIC)))).toEqual(partial);
    }
  });

  it('keeps an order id beyond 2^53 digit for digit; a line without SKU is named by null', () => {
    const raw = Buffer.from(
      [
        '{',
        '  "id": 890088186047892319,',
        '  "order_id": 820982911946154508,',
        '  "refund_line_items": [',
        '    { "id": 1, "line_item": { "id": 487817672276298554, "sku": " course-basic " } },',
        '    { "id": 2, "line_item": { "id": 487817672276298555, "sku": null } },',
        '    { "id": 3, "line_item_id": 487817672276298556 }',
        '  ]',
        '}',
      ].join('\n'),
    );
    expect(onlyRevocation(storefrontA.parse(request(raw, REFUND_TOPIC)))).toEqual({
      event: 'refund',
      order: { externalOrderId: '820982911946154508' },
      scope: { kind: 'lines', skus: ['course-basic', null, null] },
    });
  });

  it('parses orders exactly as before under any other topic, or none', () => {
    for (const headers of [{}, { 'x-storefronta-topic': 'orders/paid' }, { 'x-shopify-topic': 'orders/create' }, { 'x-storefronta-topic': '' }]) {
      expect(onlyOrder(storefrontA.parse(request(body, headers)))).toEqual(sampleOrder('5901000000001'));
    }
    // A refund body without its topic is read as an order, and has no line_items.
    expect(() => storefrontA.parse(request(refund))).toThrow(WebhookParseError);
  });

  it('is signed like an order', () => {
    const signed = signFor('storefront-a', refund, { secret: SECRET });
    expect(storefrontA.verify(request(refund, { ...signed.headers, ...REFUND_TOPIC }), { secret: SECRET }, now)).toBe('verified');
  });

  it('throws WebhookParseError on unreadable refunds', () => {
    for (const raw of ['not json', '[]', '{}', '{"order_id":null}', '{"order_id":1.5}', '{"order_id":1,"refund_line_items":{}}',
      '{"order_id":1,"refund_line_items":[3]}']) {
      expect(() => storefrontA.parse(request(raw, REFUND_TOPIC))).toThrow(WebhookParseError);
    }
  });

  it('never throws another error type', () => {
    expectOnlyParseErrors(storefrontA, refund, 300, REFUND_TOPIC);
  });
});
