import { doubledPauseMs } from '../../../src/domain/backoff';

test('a doubling pause starts at its first value, doubles, and stops at its ceiling', () => {
  const pauses: number[] = [];
  let last = 0;
  for (let i = 0; i < 6; i += 1) pauses.push(last = doubledPauseMs(last, 250, 2_000));
  expect(pauses).toEqual([250, 500, 1_000, 2_000, 2_000, 2_000]);
});
