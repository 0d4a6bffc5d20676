import { BacklogReadings } from '../../../src/services/backlog-readings';

const ORG = 'org-a';

/** Readings on a clock the test moves. */
function readingsAt(cap: number, maxAgeMs: number) {
  const clock = { now: 0 };
  return { clock, readings: new BacklogReadings(cap, maxAgeMs, () => clock.now) };
}

test('nothing is known of an organisation never read', () => {
  expect(new BacklogReadings(5).known(ORG)).toBeUndefined();
});

test('a reading below the cap is trusted while this process adds less than the rest of the cap', () => {
  const { clock, readings } = readingsAt(5, 1_000);
  expect(readings.read(ORG, 2)).toBe(false);
  clock.now = 10;
  expect(readings.known(ORG)).toBe(false);
  readings.added(ORG, 2);
  clock.now = 20;
  expect(readings.known(ORG)).toBe(false);
  // 2 read + 3 added reaches the cap: only a count can say whether the dispatcher has taken some since.
  readings.added(ORG, 1);
  clock.now = 30;
  expect(readings.known(ORG)).toBeUndefined();
});

test('a full reading is trusted for its age, then read again', () => {
  const { clock, readings } = readingsAt(5, 1_000);
  expect(readings.read(ORG, 5)).toBe(true);
  clock.now = 1_000;
  expect(readings.known(ORG)).toBe(true);
  clock.now = 1_001;
  expect(readings.known(ORG)).toBeUndefined();
});

test('a stale reading is forgotten, and only fresh ones are offered to a shared route', () => {
  const { clock, readings } = readingsAt(5, 1_000);
  readings.read('old', 0);
  clock.now = 900;
  readings.read('new', 5);
  readings.read('filling', 4);
  readings.added('filling', 1);
  clock.now = 1_500;
  expect(readings.allKnown()).toEqual(['new']);
  readings.added('old', 3);
  expect(readings.known('old')).toBeUndefined();
});
