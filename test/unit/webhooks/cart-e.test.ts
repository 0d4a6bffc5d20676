import { WebhookParseError } from '../../../src/webhooks/adapter';
import { cartE } from '../../../src/webhooks/cart-e';
import { signFor } from '../../fixtures/platforms';
import { expectOnlyParseErrors, fixture, onlyOrder, request } from './support';

const SECRET = 'test-secret-cart-e';
const now = new Date();
const body = fixture('cart-e.txt');

function withForm(extra: Record<string, string | null>): Buffer {
  const form = new URLSearchParams(body.toString());
  for (const [k, v] of Object.entries(extra)) {
    if (v === null) form.delete(k);
    else form.set(k, v);
  }
  return Buffer.from(form.toString());
}

describe('cart-e verify', () => {
  it('accepts the secret in the query', () => {
    expect(body.length).toBe(778);
    expect(cartE.verify(request(body, {}, { secret: SECRET }), { secret: SECRET }, now)).toBe(true);
    const signed = signFor('cart-e', body, { secret: SECRET });
    expect(cartE.verify(request(body, signed.headers, signed.query), { secret: SECRET }, now)).toBe(true);
  });

  it('refuses a wrong, missing or empty secret', () => {
    expect(cartE.verify(request(body, {}, { secret: 'test-secret-cart-f' }), { secret: SECRET }, now)).toBe(false);
    expect(cartE.verify(request(body, {}, { secret: SECRET.slice(0, -1) }), { secret: SECRET }, now)).toBe(false);
    expect(cartE.verify(request(body, {}, {}), { secret: SECRET }, now)).toBe(false);
    expect(cartE.verify(request(body, {}, { secret: '' }), { secret: '' }, now)).toBe(false);
    expect(cartE.verify(request(body, {}, { secret: SECRET }), {}, now)).toBe(false);
    // A secret in the body or a header does not count.
    expect(cartE.verify(request(withForm({ secret: SECRET }), { secret: SECRET }), { secret: SECRET }, now)).toBe(false);
  });
});

describe('cart-e parse', () => {
  it('parses the sample', () => {
    expect(onlyOrder(cartE.parse(request(body)))).toEqual({
      externalOrderId: 'Xk9pQ2rT5vW8yZ1bC4dF6g==',
      customer: { email: 'buyer@example.com', name: 'Sam Buyer' },
      currency: 'USD',
      lines: [{ sku: 'ebook-pro', quantity: 1, amount: '29.00' }],
      paid: true,
      test: false,
    });
  });

  it('falls back to short_product_id, reads test mode, zero-decimal currencies and a missing name', () => {
    const raw = withForm({ permalink: null, short_product_id: 'abcde', test: 'true', currency: 'jpy', price: '500', full_name: null });
    expect(onlyOrder(cartE.parse(request(raw)))).toEqual({
      externalOrderId: 'Xk9pQ2rT5vW8yZ1bC4dF6g==',
      customer: { email: 'buyer@example.com', name: null },
      currency: 'JPY',
      lines: [{ sku: 'abcde', quantity: 1, amount: '500' }],
      paid: true,
      test: true,
    });
  });

  it('has a null SKU when the ping names no product', () => {
    const raw = withForm({ permalink: null, short_product_id: null });
    expect(onlyOrder(cartE.parse(request(raw))).lines[0].sku).toBeNull();
  });

  it('ignores refund pings and other resources', () => {
    expect(cartE.parse(request(withForm({ refunded: 'true' })))).toMatchObject({ kind: 'ignored' });
    expect(cartE.parse(request(withForm({ resource_name: 'refund' })))).toMatchObject({ kind: 'ignored' });
    expect(cartE.parse(request(withForm({ resource_name: 'cancellation' })))).toMatchObject({ kind: 'ignored' });
    expect(onlyOrder(cartE.parse(request(withForm({ resource_name: null })))).externalOrderId).toBe('Xk9pQ2rT5vW8yZ1bC4dF6g==');
  });

  it('throws WebhookParseError on unreadable bodies', () => {
    for (const raw of ['', '{"sale_id":"x"}', 'sale_id=', withForm({ sale_id: null }).toString(), withForm({ quantity: '-1' }).toString()]) {
      expect(() => cartE.parse(request(raw))).toThrow(WebhookParseError);
    }
  });

  it('never throws another error type', () => {
    expectOnlyParseErrors(cartE, body);
  });
});
