import { StatementGroup } from '../../../src/db/statement-group';

/** A commit that resolves when the test says so, and records every batch it was given. */
function controlledCommit() {
  const batches: number[][] = [];
  const pending: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];
  const commit = (writes: number[]) => {
    batches.push(writes);
    return new Promise<void>((resolve, reject) => pending.push({ resolve, reject }));
  };
  return { batches, pending, commit };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('StatementGroup', () => {
  it('sends a write alone at once when nothing is in flight', async () => {
    const c = controlledCommit();
    const group = new StatementGroup<number>({ run: c.commit, maxBatch: 10, maxConcurrent: 1 });
    const done = group.submit(1);
    expect(c.batches).toEqual([[1]]);
    c.pending[0].resolve();
    await expect(done).resolves.toBeUndefined();
  });

  it('groups the writes that arrive while a batch is in flight into the next one, up to maxBatch', async () => {
    const c = controlledCommit();
    const group = new StatementGroup<number>({ run: c.commit, maxBatch: 3, maxConcurrent: 1 });
    const all = [1, 2, 3, 4, 5, 6].map((n) => group.submit(n));
    expect(c.batches).toEqual([[1]]);
    c.pending[0].resolve();
    await settle();
    expect(c.batches).toEqual([[1], [2, 3, 4]]);
    c.pending[1].resolve();
    await settle();
    expect(c.batches).toEqual([[1], [2, 3, 4], [5, 6]]);
    c.pending[2].resolve();
    await Promise.all(all);
  });

  it('keeps at most maxConcurrent batches in flight', async () => {
    const c = controlledCommit();
    const group = new StatementGroup<number>({ run: c.commit, maxBatch: 2, maxConcurrent: 2 });
    for (const n of [1, 2, 3, 4, 5]) void group.submit(n);
    expect(c.batches).toEqual([[1], [2]]);
    c.pending[1].resolve();
    await settle();
    expect(c.batches).toEqual([[1], [2], [3, 4]]);
  });

  it('when a batch fails, commits its writes one by one so only the bad one fails', async () => {
    const committed: number[] = [];
    const first = controlledCommit();
    const group = new StatementGroup<number>({
      run: async (writes) => {
        if (writes.length === 1 && writes[0] === 0) return first.commit(writes);
        if (writes.includes(13)) throw new Error(`bad write in ${writes.join(',')}`);
        committed.push(...writes);
      },
      maxBatch: 10,
      maxConcurrent: 1,
    });
    const blocker = group.submit(0);
    const results = [12, 13, 14].map((n) => group.submit(n).then(() => 'ok', (e: Error) => e.message));
    first.pending[0].resolve();
    await blocker;
    expect(await Promise.all(results)).toEqual(['ok', 'bad write in 13', 'ok']);
    expect(committed.sort()).toEqual([12, 14]);
  });

  it('answers each caller with its own item\'s result, alone or in a batch, and after a failed batch', async () => {
    const first = controlledCommit();
    const group = new StatementGroup<number, string>({
      run: async (items) => {
        if (items.length === 1 && items[0] === 0) {
          await first.commit(items);
          return ['zero'];
        }
        if (items.includes(13) && items.length > 1) throw new Error('the batch failed');
        return items.map((n) => `answer ${n}`);
      },
      maxBatch: 2,
      maxConcurrent: 1,
    });
    const blocker = group.submit(0);
    const batched = [11, 12].map((n) => group.submit(n));
    const afterFailure = [14, 13].map((n) => group.submit(n));
    first.pending[0].resolve();
    expect(await blocker).toBe('zero');
    expect(await Promise.all([...batched, ...afterFailure])).toEqual(['answer 11', 'answer 12', 'answer 14', 'answer 13']);
  });
});
