/** The next time of an interval schedule (Temporal's interval spec: epoch + n × every). */
import { nextIntervalTime } from '../../../src/domain/reconciliation';

const HOUR = 3_600_000;

test('the next whole interval since the epoch, after now', () => {
  expect(nextIntervalTime(HOUR, new Date('2026-12-05T15:59:59.999Z')).toISOString()).toBe('2026-12-05T16:00:00.000Z');
  expect(nextIntervalTime(15 * 60_000, new Date('2026-12-05T15:07:00Z')).toISOString()).toBe('2026-12-05T15:15:00.000Z');
});

test('a time on the interval itself gives the following one (that run is already being started)', () => {
  expect(nextIntervalTime(HOUR, new Date('2026-12-05T16:00:00Z')).toISOString()).toBe('2026-12-05T17:00:00.000Z');
});

test('an interval that does not divide a day is still counted from the epoch, not from midnight', () => {
  // 7 h: 1970-01-01T00:00Z + 71,288 × 7 h = 2026-12-05T08:00Z, so the next is 15:00Z.
  expect(nextIntervalTime(7 * HOUR, new Date('2026-12-05T10:00:00Z')).toISOString()).toBe('2026-12-05T15:00:00.000Z');
});
