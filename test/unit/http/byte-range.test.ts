import { decideRange, ifRangeHolds, noneMatchHits, notModifiedSince } from '../../../src/http/byte-range';

describe('decideRange', () => {
  test.each([
    [undefined, { kind: 'full' }],
    ['bytes=0-99', { kind: 'partial', start: 0, end: 99 }],
    ['bytes=0-0', { kind: 'partial', start: 0, end: 0 }],
    ['bytes=900-', { kind: 'partial', start: 900, end: 999 }],
    ['bytes=-1', { kind: 'partial', start: 999, end: 999 }],
    ['bytes=-5000', { kind: 'partial', start: 0, end: 999 }],
    ['bytes=10-5000', { kind: 'partial', start: 10, end: 999 }],
    ['BYTES = 1 - 2', { kind: 'partial', start: 1, end: 2 }],
    ['bytes=1000-', { kind: 'unsatisfiable' }],
    ['bytes=1000-2000', { kind: 'unsatisfiable' }],
    ['bytes=-0', { kind: 'unsatisfiable' }],
    ['bytes=5-1', { kind: 'full' }],
    ['bytes=-', { kind: 'full' }],
    ['bytes=a-b', { kind: 'full' }],
    ['bytes=0-1,3-4', { kind: 'full' }],
    ['items=0-1', { kind: 'full' }],
    ['bytes=99999999999999999999-', { kind: 'full' }],
  ])('%s of 1000 bytes', (header, expected) => {
    expect(decideRange(header, 1000)).toEqual(expected);
  });

  test('an empty file satisfies no range', () => {
    expect(decideRange('bytes=0-', 0)).toEqual({ kind: 'unsatisfiable' });
    expect(decideRange('bytes=-10', 0)).toEqual({ kind: 'unsatisfiable' });
  });
});

describe('validators', () => {
  const etag = '"abc"';
  const modified = new Date('2026-11-25T10:00:00.700Z');

  test('If-Range: the strong ETag or the exact date', () => {
    expect(ifRangeHolds(undefined, etag, modified)).toBe(true);
    expect(ifRangeHolds('"abc"', etag, modified)).toBe(true);
    expect(ifRangeHolds('"abd"', etag, modified)).toBe(false);
    expect(ifRangeHolds('W/"abc"', etag, modified)).toBe(false);
    expect(ifRangeHolds(modified.toUTCString(), etag, modified)).toBe(true);
    expect(ifRangeHolds(new Date('2026-11-25T09:00:00Z').toUTCString(), etag, modified)).toBe(false);
    expect(ifRangeHolds('yesterday', etag, modified)).toBe(false);
  });

  test('If-None-Match: weak comparison over a list, or *', () => {
    expect(noneMatchHits(undefined, etag)).toBe(false);
    expect(noneMatchHits('"x", W/"abc"', etag)).toBe(true);
    expect(noneMatchHits('*', etag)).toBe(true);
    expect(noneMatchHits('"x"', etag)).toBe(false);
  });

  test('If-Modified-Since: at or after Last-Modified, to the second', () => {
    expect(notModifiedSince(modified.toUTCString(), modified)).toBe(true);
    expect(notModifiedSince(new Date('2026-11-25T09:59:59Z').toUTCString(), modified)).toBe(false);
    expect(notModifiedSince('garbage', modified)).toBe(false);
    expect(notModifiedSince(undefined, modified)).toBe(false);
  });
});
