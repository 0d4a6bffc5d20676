import { WebhookParseError } from '../../../src/webhooks/adapter';
import { cartE } from '../../../src/webhooks/cart-e';
import { signFor } from '../../fixtures/platforms';
import { webhookSample } from '../../fixtures/samples';
import { expectOnlyParseErrors, fixture, onlyOrder, onlyRevocation, request } from './support';

const SECRET = 'test-secret-cart-e';
const now = new Date();
const body = fixture('cart-e.txt');

function withForm(extra: Record<string, string | null>, from: Buffer = body): Buffer {
  const form = new URLSearchParams(from.toString());
  for (const [k, v] of Object.entries(extra)) {
    if (v === null) form.delete(k);
    else form.set(k, v);
  }
  return Buffer.from(form.toString());
}

describe('cart-e verify', () => {
  it('accepts the secret in the query', () => {
    expect(body.length).toBe(778);
    expect(cartE.verify(request(body, {}, { secret: SECRET }), { secret: SECRET }, now)).toBe('verified');
    const signed = signFor('cart-e', body, { secret: SECRET });
    expect(cartE.verify(request(body, signed.headers, signed.query), { secret: SECRET }, now)).toBe('verified');
  });

  it('refuses a wrong, missing or empty secret', () => {
    expect(cartE.verify(request(body, {}, { secret: 'test-secret-cart-f' }), { secret: SECRET }, now)).toBe('signature mismatch');
    expect(cartE.verify(request(body, {}, { secret: SECRET.slice(0, -1) }), { secret: SECRET }, now)).toBe('signature mismatch');
    expect(cartE.verify(request(body, {}, {}), { secret: SECRET }, now)).toBe('signature header missing');
    expect(cartE.verify(request(body, {}, { secret: '' }), { secret: '' }, now)).toBe('signature header missing');
    expect(cartE.verify(request(body, {}, { secret: SECRET }), {}, now)).toBe('signature mismatch');
    // A secret in the body or a header does not count.
    expect(cartE.verify(request(withForm({ secret: SECRET }), { secret: SECRET }), { secret: SECRET }, now)).toBe('signature header missing');
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

  it('ignores other resources', () => {
    for (const resource of ['cancellation', 'dispute_won', 'subscription_ended', 'subscription_restarted', 'subscription_updated']) {
      expect(cartE.parse(request(withForm({ resource_name: resource })))).toEqual({
        kind: 'ignored',
        reason: `resource ${resource} is not a sale, refund or dispute`,
      });
    }
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

describe('cart-e refund and dispute pings', () => {
  const refunded = webhookSample('cart-e.refunded.txt');
  const disputed = webhookSample('cart-e.disputed.txt');
  const sale = { externalOrderId: 'Xk9pQ2rT5vW8yZ1bC4dF6g==' };

  it('reads refunded=true as a refund of the whole sale', () => {
    expect(onlyRevocation(cartE.parse(request(refunded)))).toEqual({ event: 'refund', order: sale, scope: { kind: 'order' } });
    // The same when the sale's own ping is sent again with the flag set.
    for (const resource of ['sale', null]) {
      expect(onlyRevocation(cartE.parse(request(withForm({ refunded: 'true', resource_name: resource }))))).toEqual({
        event: 'refund',
        order: sale,
        scope: { kind: 'order' },
      });
    }
  });

  it('revokes nothing for a partial refund: a refund ping whose refunded is not true', () => {
    for (const flag of ['false', null]) {
      expect(onlyRevocation(cartE.parse(request(withForm({ refunded: flag }, refunded))))).toEqual({
        event: 'refund',
        order: sale,
        scope: { kind: 'none', reason: 'partial refund, access kept' },
      });
    }
  });

  it('reads disputed=true, or the dispute resource, as a dispute of the whole sale', () => {
    const dispute = { event: 'dispute', order: sale, scope: { kind: 'order' } };
    expect(onlyRevocation(cartE.parse(request(disputed)))).toEqual(dispute);
    expect(onlyRevocation(cartE.parse(request(withForm({ resource_name: 'sale', disputed: 'true' }))))).toEqual(dispute);
    expect(onlyRevocation(cartE.parse(request(withForm({ disputed: 'false' }, disputed))))).toEqual(dispute);
  });

  it('does not take a won dispute for a new one', () => {
    const won = withForm({ resource_name: 'sale', disputed: 'true', dispute_won: 'true' });
    expect(onlyOrder(cartE.parse(request(won))).externalOrderId).toBe('Xk9pQ2rT5vW8yZ1bC4dF6g==');
    expect(cartE.parse(request(withForm({ resource_name: 'dispute_won', dispute_won: 'true' }, disputed))).kind).toBe('ignored');
  });

  it('lets a full refund win over a dispute flag on a re-sent sale ping', () => {
    expect(onlyRevocation(cartE.parse(request(withForm({ resource_name: null, refunded: 'true', disputed: 'true' })))).event).toBe('refund');
  });

  it('reads only the sale id: product and price fields may be missing', () => {
    const bare = Buffer.from('sale_id=abc%3D%3D&refunded=true');
    expect(onlyRevocation(cartE.parse(request(bare)))).toEqual({ event: 'refund', order: { externalOrderId: 'abc==' }, scope: { kind: 'order' } });
  });

  it('is authenticated like a sale ping', () => {
    expect(cartE.verify(request(refunded, {}, { secret: SECRET }), { secret: SECRET }, now)).toBe('verified');
  });

  it('throws WebhookParseError without a sale id', () => {
    for (const raw of [withForm({ sale_id: null }, refunded), withForm({ sale_id: ' ' }, disputed), Buffer.from('resource_name=refund')]) {
      expect(() => cartE.parse(request(raw))).toThrow(WebhookParseError);
    }
  });

  it('never throws another error type', () => {
    expectOnlyParseErrors(cartE, refunded);
    expectOnlyParseErrors(cartE, disputed);
  });
});
