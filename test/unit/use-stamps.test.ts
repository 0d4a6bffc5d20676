import { UseStamps } from '../../src/services/use-stamps';

describe('UseStamps: a "last used" write at most once an interval per key', () => {
  const counting = () => {
    const writes: string[] = [];
    return { writes, write: (key: string) => async () => { writes.push(key); } };
  };

  test('a key written once within the interval, again after it; other keys on their own', async () => {
    const stamps = new UseStamps(60_000);
    const { writes, write } = counting();
    await stamps.write('a', 0, write('a'));
    await stamps.write('a', 59_999, write('a'));
    await stamps.write('b', 59_999, write('b'));
    await stamps.write('a', 60_000, write('a'));
    expect(writes).toEqual(['a', 'b', 'a']);
  });

  test('concurrent uses start one write', async () => {
    const stamps = new UseStamps(60_000);
    let started = 0;
    let finish!: () => void;
    const slow = () => { started += 1; return new Promise<void>((resolve) => { finish = resolve; }); };
    const all = Promise.all(Array.from({ length: 10 }, () => stamps.write('a', 1_000, slow)));
    expect(started).toBe(1);
    finish();
    await all;
  });

  test('a failed write is forgotten, so the next use retries it; a clock that went back counts as due', async () => {
    const stamps = new UseStamps(60_000);
    const { writes, write } = counting();
    await expect(stamps.write('a', 1_000, async () => { throw new Error('database down'); })).rejects.toThrow('database down');
    await stamps.write('a', 1_001, write('a'));
    await stamps.write('a', 500, write('a'));
    expect(writes).toEqual(['a', 'a']);
  });
});
