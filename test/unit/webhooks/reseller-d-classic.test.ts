import { createHash } from 'node:crypto';
import { WebhookParseError } from '../../../src/webhooks/adapter';
import { resellerDClassic } from '../../../src/webhooks/reseller-d-classic';
import { signFor } from '../../fixtures/platforms';
import { expectOnlyParseErrors, fixture, onlyOrder, request, sampleOrder } from './support';

const KEY = 'test-private-key-reseller-d-classic';
const DATA = '1767352800000';
const HASH = 'e3a2f8a2ac6e802c53fed4932b2091b2';
const now = new Date();
const body = fixture('reseller-d-classic.txt');
const headers = { 'x-security-data': DATA, 'x-security-hash': HASH };

function withForm(extra: Record<string, string>, base = body.toString()): Buffer {
  const form = new URLSearchParams(base);
  for (const [k, v] of Object.entries(extra)) form.set(k, v);
  return Buffer.from(form.toString());
}

describe('reseller-d-classic verify', () => {
  it('accepts the documented vector from the headers', () => {
    expect(body.length).toBe(449);
    expect(resellerDClassic.verify(request(body, headers), { privateKey: KEY }, now)).toBe('verified');
    expect(resellerDClassic.verify(request(body, { ...headers, 'x-security-hash': HASH.toUpperCase() }), { privateKey: KEY }, now)).toBe('verified');
  });

  it('accepts the pair from the form fields', () => {
    const raw = withForm({ security_data: DATA, security_hash: HASH });
    expect(resellerDClassic.verify(request(raw), { privateKey: KEY }, now)).toBe('verified');
    const spaced = withForm({ security_data: '2026 01 02', security_hash: createHash('md5').update(`2026 01 02${KEY}`).digest('hex') });
    expect(resellerDClassic.verify(request(spaced), { privateKey: KEY }, now)).toBe('verified');
  });

  it('refuses a wrong key, a changed data or hash, a missing pair or key', () => {
    expect(resellerDClassic.verify(request(body, headers), { privateKey: 'other' }, now)).toBe('signature mismatch');
    expect(resellerDClassic.verify(request(body, { ...headers, 'x-security-data': '1767352800001' }), { privateKey: KEY }, now)).toBe('signature mismatch');
    expect(resellerDClassic.verify(request(body, { ...headers, 'x-security-hash': HASH.replace('e3', 'e4') }), { privateKey: KEY }, now)).toBe('signature mismatch');
    expect(resellerDClassic.verify(request(body, { 'x-security-hash': HASH }), { privateKey: KEY }, now)).toBe('signature header missing');
    expect(resellerDClassic.verify(request(body, {}), { privateKey: KEY }, now)).toBe('signature header missing');
    expect(resellerDClassic.verify(request(body, headers), {}, now)).toBe('signature mismatch');
    expect(resellerDClassic.verify(request(body, headers), { privateKey: '' }, now)).toBe('signature mismatch');
    expect(resellerDClassic.verify(request(withForm({ security_data: '', security_hash: HASH })), { privateKey: KEY }, now)).toBe('signature header missing');
  });

  it('accepts a request signed with the test helper', () => {
    const signed = signFor('reseller-d-classic', body, { privateKey: KEY });
    expect(resellerDClassic.verify(request(body, signed.headers), { privateKey: KEY }, now)).toBe('verified');
  });
});

describe('reseller-d-classic parse', () => {
  it('parses the sample', () => {
    expect(onlyOrder(resellerDClassic.parse(request(body)))).toEqual(sampleOrder('ACME260102-3333-44444'));
  });

  it('reads every item_<n>_product in numeric order, test mode and UTF-8 fields', () => {
    const raw = 'reference=R%2F1&test=true&currency=eur&fname=J%C3%B6rg&lname=&email=+j%40x.de+' +
      '&item_10_product=ten&item_10_quantity=2&item_10_subtotal=20&item_2_product=two&item_2_subtotal=2.5';
    expect(onlyOrder(resellerDClassic.parse(request(raw)))).toEqual({
      externalOrderId: 'R/1',
      customer: { email: 'j@x.de', name: 'Jörg' },
      currency: 'EUR',
      lines: [
        { sku: 'two', quantity: 1, amount: '2.50' },
        { sku: 'ten', quantity: 2, amount: '20.00' },
      ],
      paid: true,
      test: true,
    });
  });

  it('throws WebhookParseError on unreadable bodies', () => {
    for (const raw of ['', 'garbage', '{"reference":"x"}', 'reference=', 'reference=x&item_1_product=a&item_1_quantity=many']) {
      expect(() => resellerDClassic.parse(request(raw))).toThrow(WebhookParseError);
    }
  });

  it('never throws another error type', () => {
    expectOnlyParseErrors(resellerDClassic, body);
  });
});
