import { BacklogReadings } from '../../../src/services/backlog-readings';

const ORG = 'org-a';

test('nothing is known of an organisation never read', () => {
  expect(new BacklogReadings(5).known(ORG, 0)).toBeUndefined();
});

test('a reading below the cap is trusted while this process adds less than the rest of the cap', () => {
  const readings = new BacklogReadings(5, 1_000);
  expect(readings.read(ORG, 2, 0)).toBe(false);
  expect(readings.known(ORG, 10)).toBe(false);
  readings.added(ORG, 2);
  expect(readings.known(ORG, 20)).toBe(false);
  // 2 read + 3 added reaches the cap: only a count can say whether the dispatcher has taken some since.
  readings.added(ORG, 1);
  expect(readings.known(ORG, 30)).toBeUndefined();
});

test('a full reading is trusted for its age, then read again', () => {
  const readings = new BacklogReadings(5, 1_000);
  expect(readings.read(ORG, 5, 0)).toBe(true);
  expect(readings.known(ORG, 1_000)).toBe(true);
  expect(readings.known(ORG, 1_001)).toBeUndefined();
});

test('a stale reading is forgotten, and only fresh ones are offered to a shared route', () => {
  const readings = new BacklogReadings(5, 1_000);
  readings.read('old', 0, 0);
  readings.read('new', 5, 900);
  readings.read('filling', 4, 900);
  readings.added('filling', 1);
  expect(readings.allKnown(1_500)).toEqual(['new']);
  readings.added('old', 3);
  expect(readings.known('old', 1_500)).toBeUndefined();
});
