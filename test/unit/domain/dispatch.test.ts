import { dispatchRetryDelayMs, ENGINE_RETRY_MAX_MS } from '../../../src/domain/dispatch';

test('a refused dispatch waits 0.5 s, doubling per refusal up to 30 s', () => {
  expect([1, 2, 3, 4].map((n) => dispatchRetryDelayMs(n, 0.5, 'refused'))).toEqual([500, 1_000, 2_000, 4_000]);
  expect(dispatchRetryDelayMs(7, 0.5, 'refused')).toBe(30_000);
  expect(dispatchRetryDelayMs(60, 0.5, 'refused')).toBe(30_000);
});

test('the wait is spread by ±50 % so rows refused together come back apart', () => {
  expect(dispatchRetryDelayMs(3, 0, 'refused')).toBe(1_000);
  expect(dispatchRetryDelayMs(3, 0.999, 'refused')).toBe(2_998);
  expect(dispatchRetryDelayMs(10, 0, 'refused')).toBe(15_000);
});

test('a dispatch the engine was out of reach for waits at most 5 s: the loops\' pauses spare the engine, a longer wait only delays its return', () => {
  expect([1, 2, 3, 4].map((n) => dispatchRetryDelayMs(n, 0.5, 'unreachable'))).toEqual([500, 1_000, 2_000, 4_000]);
  expect(dispatchRetryDelayMs(5, 0.5, 'unreachable')).toBe(ENGINE_RETRY_MAX_MS);
  expect(dispatchRetryDelayMs(60, 0.5, 'unreachable')).toBe(5_000);
  expect(dispatchRetryDelayMs(60, 0.999, 'unreachable')).toBe(7_495);
});
