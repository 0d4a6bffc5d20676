/** Rows read in batches carry their id: the next batch starts after the last row's id. */
export interface KeyedRow {
  id: string;
}

/** Reads one batch of at most `size` rows after the row whose id is `after` (null: from the start). */
export type BatchReader<Row extends KeyedRow> = (after: string | null, size: number) => Promise<Row[]>;

export interface BatchOptions {
  /** Start after this row id (a paging cursor already checked by the caller). */
  after?: string | null;
  /** At most this many rows in all; absent: every row. */
  limit?: number;
  /** Rows per query. */
  batchSize?: number;
}

export const DEFAULT_BATCH_SIZE = 1000;

/**
 * Keyset pagination for results too large to hold in memory: each batch is one short query (no
 * connection or transaction is held between batches) that starts after the previous batch's last
 * row. The first batch is read before this resolves, so that a failing query still becomes a
 * proper error response instead of a stream cut short after a 200.
 */
export async function readInBatches<Row extends KeyedRow>(
  read: BatchReader<Row>,
  options: BatchOptions = {},
): Promise<AsyncIterable<Row[]>> {
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  let remaining = options.limit ?? Number.POSITIVE_INFINITY;
  let size = Math.min(batchSize, remaining);
  const first = await read(options.after ?? null, size);

  async function* batches(): AsyncGenerator<Row[]> {
    let batch = first;
    while (batch.length > 0) {
      remaining -= batch.length;
      const last = batch.length < size || remaining <= 0;
      // The next query runs while the consumer writes this batch out (at most two batches in
      // memory). If the consumer stops early, the query's outcome is dropped, never unhandled.
      size = Math.min(batchSize, remaining);
      const next = last ? null : read(batch[batch.length - 1].id, size);
      next?.catch(() => undefined);
      yield batch;
      if (!next) return;
      batch = await next;
    }
  }
  return batches();
}
