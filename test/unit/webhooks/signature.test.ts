import { PLATFORMS } from '../../../src/domain/platforms';
import { ADAPTERS, adapters, webhookPath } from '../../../src/webhooks/registry';
import { headerValue, hmacSha256, safeEqual } from '../../../src/webhooks/signature';
import { signFor } from '../../fixtures/platforms';
import { request } from './support';

describe('signature helpers', () => {
  it('safeEqual compares bytes and strings, any length', () => {
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual(Buffer.from('abc'), 'abc')).toBe(true);
    expect(safeEqual('abc', 'abd')).toBe(false);
    expect(safeEqual('abc', 'abcd')).toBe(false);
    expect(safeEqual('', '')).toBe(true);
  });

  it('hmacSha256 hashes parts as one message', () => {
    expect(hmacSha256('k', ['a.', Buffer.from('b')]).equals(hmacSha256('k', 'a.b'))).toBe(true);
    expect(hmacSha256('key', 'The quick brown fox jumps over the lazy dog').toString('hex')).toBe(
      'f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8',
    );
  });

  it('headerValue prefers the first name, falls back to aliases, reads arrays, ignores empty values', () => {
    const headers = { 'x-b': 'two', 'x-a': '', 'x-c': ['three', 'four'], 'X-Mixed': 'm' };
    expect(headerValue(headers, 'x-a', 'x-b')).toBe('two');
    expect(headerValue(headers, 'X-B', 'x-c')).toBe('two');
    expect(headerValue(headers, 'x-c')).toBe('three');
    expect(headerValue(headers, 'x-mixed')).toBe('m');
    expect(headerValue(headers, 'x-none')).toBeUndefined();
  });
});

describe('registry', () => {
  it('has one adapter per platform, under its own word, in the order of the list', () => {
    for (const platform of PLATFORMS) expect(adapters[platform].platform).toBe(platform);
    expect(ADAPTERS.map((a) => a.platform)).toEqual([...PLATFORMS]);
  });

  it('each adapter describes what the routes and the Integrations page need', () => {
    for (const adapter of ADAPTERS) {
      expect(adapter.contentTypes.length).toBeGreaterThan(0);
      for (const type of adapter.contentTypes) expect(type).toMatch(/^[a-z]+\/[a-z0-9.+-]+$/);
      expect(adapter.secretField.label.trim()).not.toBe('');
    }
    expect(webhookPath(adapters['storefront-a'], 'org-1')).toBe('/webhooks/org-1/storefront-a');
    expect(webhookPath(adapters['payments-c'], 'org-1')).toBe('/webhooks/payments-c');
  });

  it('every adapter verifies what signFor signs, and nothing signed with another secret', () => {
    const raw = Buffer.from('{"id":1}');
    const nowSeconds = Math.floor(Date.now() / 1000);
    for (const platform of PLATFORMS) {
      const secrets = { secret: `s-${platform}`, privateKey: `k-${platform}` };
      const signed = signFor(platform, raw, secrets, nowSeconds);
      const req = request(raw, signed.headers, signed.query);
      expect([platform, adapters[platform].verify(req, secrets, new Date())]).toEqual([platform, 'verified']);
      const other = { secret: 'other', privateKey: 'other' };
      expect([platform, adapters[platform].verify(req, other, new Date())]).toEqual([platform, 'signature mismatch']);
    }
  });
});
