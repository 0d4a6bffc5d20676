import { downloadLinkExpiry, lifetimeWords } from '../../../src/domain/download-links';
import { loadConfig } from '../../../src/config';

const HOUR = 3_600_000;

test('a link lifetime reads as people say it', () => {
  expect(lifetimeWords(48 * HOUR)).toBe('48 hours');
  expect(lifetimeWords(HOUR)).toBe('1 hour');
  expect(lifetimeWords(90 * 60_000)).toBe('90 minutes');
  expect(lifetimeWords(14 * 24 * HOUR)).toBe('14 days');
  expect(lifetimeWords(30_000)).toBe('30 seconds');
});

test('DOWNLOAD_LINK_TTL sets the lifetime (default: the spec\'s 48 hours)', () => {
  expect(loadConfig({}).downloadLinks.ttlMs).toBe(48 * HOUR);
  const config = loadConfig({ DOWNLOAD_LINK_TTL: '2h', SITE_URL: 'https://shop.example/' });
  expect(config.downloadLinks).toEqual({ siteUrl: 'https://shop.example', ttlMs: 2 * HOUR });
  expect(downloadLinkExpiry(new Date('2026-01-01T00:00:00Z'), config.downloadLinks.ttlMs).toISOString()).toBe('2026-01-01T02:00:00.000Z');
  expect(() => loadConfig({ DOWNLOAD_LINK_TTL: 'two days' })).toThrow(/DOWNLOAD_LINK_TTL/);
});
