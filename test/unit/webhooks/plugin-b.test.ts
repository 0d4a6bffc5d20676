import { createHmac } from 'node:crypto';
import { WebhookParseError } from '../../../src/webhooks/adapter';
import { pluginB, wpSpecialcharsDecode } from '../../../src/webhooks/plugin-b';
import { signFor } from '../../fixtures/platforms';
import { webhookSample } from '../../fixtures/samples';
import { edited, editedBody, expectOnlyParseErrors, fixture, flipped, onlyOrder, onlyRevocation, request, sampleOrder } from './support';

const SECRET = 'test-secret-plugin-b';
const VECTOR = 'XLJAbNMtIXIpY3pEtTNdDwQ5n2Mo6Lr8CbjU/zmisDg=';
const now = new Date();
const body = fixture('plugin-b.json');
const refunded = webhookSample('plugin-b.refunded.json');

describe('plugin-b verify', () => {
  it('accepts the documented vector under the platform alias and the spec header', () => {
    expect(body.length).toBe(2906);
    expect(pluginB.verify(request(body, { 'x-wc-webhook-signature': VECTOR }), { secret: SECRET }, now)).toBe('verified');
    expect(pluginB.verify(request(body, { 'x-pluginb-webhook-signature': VECTOR }), { secret: SECRET }, now)).toBe('verified');
  });

  it('refuses a flipped byte, a wrong secret, a missing header or secret', () => {
    const headers = { 'x-pluginb-webhook-signature': VECTOR };
    expect(pluginB.verify(request(flipped(body, 2000), headers), { secret: SECRET }, now)).toBe('signature mismatch');
    expect(pluginB.verify(request(body, headers), { secret: 'test-secret-plugin-c' }, now)).toBe('signature mismatch');
    expect(pluginB.verify(request(body, {}), { secret: SECRET }, now)).toBe('signature header missing');
    expect(pluginB.verify(request(body, headers), {}, now)).toBe('signature mismatch');
  });

  it('keys the HMAC with the entity-decoded secret, like wp_specialchars_decode(ENT_QUOTES)', () => {
    const secret = 'a&amp;b&lt;c&gt;d&quot;e&#039;f&#39;g&#x27;h&amp;amp;i&nbsp;';
    const decoded = 'a&b<c>d"e\'f\'g\'h&amp;i&nbsp;';
    expect(wpSpecialcharsDecode(secret)).toBe(decoded);
    expect(wpSpecialcharsDecode('plain-secret')).toBe('plain-secret');
    const raw = Buffer.from('{"id":1,"status":"processing","line_items":[]}');
    const signature = createHmac('sha256', decoded).update(raw).digest('base64');
    expect(pluginB.verify(request(raw, { 'x-wc-webhook-signature': signature }), { secret }, now)).toBe('verified');
    const undecoded = createHmac('sha256', secret).update(raw).digest('base64');
    expect(pluginB.verify(request(raw, { 'x-wc-webhook-signature': undecoded }), { secret }, now)).toBe('signature mismatch');
  });

  it('accepts a body re-signed with the test helper', () => {
    const raw = edited('plugin-b.json', (b) => (b.status = 'completed'));
    const signed = signFor('plugin-b', raw, { secret: SECRET });
    expect(pluginB.verify(request(raw, signed.headers), { secret: SECRET }, now)).toBe('verified');
  });
});

describe('plugin-b activation ping', () => {
  it('recognises exactly webhook_id=<digits>', () => {
    expect(pluginB.isUnsignedPing?.(request('webhook_id=17'))).toBe(true);
    expect(pluginB.isUnsignedPing?.(request('webhook_id=17&x=1'))).toBe(false);
    expect(pluginB.isUnsignedPing?.(request('webhook_id=abc'))).toBe(false);
    expect(pluginB.isUnsignedPing?.(request('webhook_id='))).toBe(false);
    expect(pluginB.isUnsignedPing?.(request(body))).toBe(false);
    expect(pluginB.parse(request('webhook_id=17')).kind).toBe('ignored');
  });
});

describe('plugin-b parse', () => {
  it('parses the sample', () => {
    expect(onlyOrder(pluginB.parse(request(body)))).toEqual(sampleOrder('4801'));
  });

  it('holds orders that are not processing or completed', () => {
    for (const status of ['pending', 'on-hold', 'failed', 'trash', 'checkout-draft']) {
      const raw = edited('plugin-b.json', (b) => (b.status = status));
      expect(onlyOrder(pluginB.parse(request(raw))).paid).toBe(false);
    }
    const completed = edited('plugin-b.json', (b) => (b.status = 'completed'));
    expect(onlyOrder(pluginB.parse(request(completed))).paid).toBe(true);
  });

  it('reads compact bodies with \\/ and \\u escapes, big ids, missing SKUs and several items', () => {
    const raw = Buffer.from(
      String.raw`{"id":90071992547409931,"status":"processing","currency":"eur","billing":{"first_name":"Zo\u00eb","last_name":"","email":"zoe@example.com"},"line_items":[{"sku":"a\/b","quantity":2,"total":"58.00","price":29},{"sku":"","quantity":1,"total":"0.00"},{"sku":null,"quantity":1,"total":"10.5"}]}`,
    );
    expect(onlyOrder(pluginB.parse(request(raw)))).toEqual({
      externalOrderId: '90071992547409931',
      customer: { email: 'zoe@example.com', name: 'Zoë' },
      currency: 'EUR',
      lines: [
        { sku: 'a/b', quantity: 2, amount: '58.00' },
        { sku: null, quantity: 1, amount: '0.00' },
        { sku: null, quantity: 1, amount: '10.50' },
      ],
      paid: true,
      test: false,
    });
  });

  it('throws WebhookParseError on unreadable bodies', () => {
    for (const raw of ['webhook_id=1&x=2', '{"status":"processing","line_items":[]}', '{"id":"","line_items":[]}', '{"id":1,"line_items":{}}']) {
      expect(() => pluginB.parse(request(raw))).toThrow(WebhookParseError);
    }
  });

  it('never throws another error type', () => {
    expectOnlyParseErrors(pluginB, body);
  });
});

describe('plugin-b refunds (status refunded or cancelled)', () => {
  const wholeOrder = { event: 'refund', order: { externalOrderId: '4801' }, scope: { kind: 'order' } };

  it('takes the whole order back when it is refunded', () => {
    expect(onlyRevocation(pluginB.parse(request(refunded, { 'x-wc-webhook-topic': 'order.updated' })))).toEqual(wholeOrder);
  });

  it('does so for a cancelled order too, whatever the topic header says', () => {
    const cancelled = editedBody(refunded, (b) => (b.status = 'cancelled'));
    for (const headers of [{}, { 'x-wc-webhook-topic': 'order.created' }, { 'x-wc-webhook-topic': 'order.updated' }]) {
      expect(onlyRevocation(pluginB.parse(request(cancelled, headers)))).toEqual(wholeOrder);
      expect(onlyRevocation(pluginB.parse(request(refunded, headers)))).toEqual(wholeOrder);
    }
  });

  it('reads a refunded order even when its lines are gone or unreadable', () => {
    const bare = '{"id":90071992547409931,"status":"refunded","line_items":{}}';
    expect(onlyRevocation(pluginB.parse(request(bare)))).toEqual({ ...wholeOrder, order: { externalOrderId: '90071992547409931' } });
  });

  it('keeps reading other statuses as orders (status is compared exactly)', () => {
    for (const status of ['Refunded', 'completed', 'processing']) {
      const raw = editedBody(refunded, (b) => (b.status = status));
      expect(onlyOrder(pluginB.parse(request(raw))).externalOrderId).toBe('4801');
    }
  });

  it('is signed like an order', () => {
    const signed = signFor('plugin-b', refunded, { secret: SECRET });
    expect(pluginB.verify(request(refunded, signed.headers), { secret: SECRET }, now)).toBe('verified');
  });

  it('throws WebhookParseError when the refunded order has no id', () => {
    for (const raw of ['{"status":"refunded"}', '{"id":"","status":"cancelled"}', '{"id":1.5,"status":"refunded"}']) {
      expect(() => pluginB.parse(request(raw))).toThrow(WebhookParseError);
    }
  });

  it('never throws another error type', () => {
    expectOnlyParseErrors(pluginB, refunded);
  });
});
