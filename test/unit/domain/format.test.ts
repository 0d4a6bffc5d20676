import { formatBytes, formatUtc } from '../../../src/domain/format';

test.each([
  [0, '0 bytes'],
  [1, '1 byte'],
  [999, '999 bytes'],
  [1000, '1 KB'],
  [1536, '1.5 KB'],
  [262_267, '262 KB'],
  [999_960, '1 MB'],
  [2_147_483_648, '2.1 GB'],
  [5e12, '5 TB'],
])('formatBytes(%d) = %s', (bytes, text) => {
  expect(formatBytes(bytes)).toBe(text);
});

test('formatUtc names the day and says UTC', () => {
  expect(formatUtc(new Date('2026-11-27T14:05:09Z'))).toBe('Friday 27 November 2026, 14:05 UTC');
  expect(formatUtc(new Date('2026-01-02T00:00:00Z'))).toBe('Friday 2 January 2026, 00:00 UTC');
});
