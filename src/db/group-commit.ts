/**
 * Group commit: many callers' writes, each needing its own "committed" answer, go to PostgreSQL as
 * one statement per batch. A caller arriving while `maxConcurrent` batches are in flight waits for
 * the next one and shares its commit, so under load one round trip and one WAL flush serve many
 * requests, and at low load a write goes out alone at once (no timer, no added latency).
 *
 * A failed batch is tried again one write at a time, so one bad write fails only its own caller.
 */
interface Waiting<T> {
  write: T;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export interface GroupCommitOptions<T> {
  /** Commits the writes together: all of them or none (one statement or one transaction). */
  commit: (writes: T[]) => Promise<void>;
  /** Most writes in one batch. */
  maxBatch: number;
  /** Batches in flight at once (each holds a pool connection). */
  maxConcurrent: number;
}

export class GroupCommit<T> {
  private waiting: Waiting<T>[] = [];
  private inFlight = 0;

  constructor(private readonly options: GroupCommitOptions<T>) {}

  /** Resolves once `write` is committed; rejects with its own error when it cannot be. */
  submit(write: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ write, resolve, reject });
      this.startBatches();
    });
  }

  private startBatches(): void {
    while (this.inFlight < this.options.maxConcurrent && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.options.maxBatch);
      this.inFlight += 1;
      void this.commitBatch(batch).finally(() => {
        this.inFlight -= 1;
        this.startBatches();
      });
    }
  }

  private async commitBatch(batch: Waiting<T>[]): Promise<void> {
    try {
      await this.options.commit(batch.map((w) => w.write));
      for (const w of batch) w.resolve();
    } catch (error) {
      if (batch.length === 1) {
        batch[0].reject(error);
        return;
      }
      // Nothing of the batch was committed: each write alone, so only the bad one fails.
      await Promise.all(batch.map(async (w) => {
        try {
          await this.options.commit([w.write]);
          w.resolve();
        } catch (own) {
          w.reject(own);
        }
      }));
    }
  }
}
