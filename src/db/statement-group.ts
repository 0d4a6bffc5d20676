/**
 * Many callers' statements as one: each caller's item (a write to commit, a lookup to answer) goes
 * to PostgreSQL in one statement per batch, and each caller gets its own answer. A caller arriving
 * while `maxConcurrent` batches are in flight waits for the next one and shares it, so under load
 * one round trip (and, for writes, one WAL flush) serves many requests, and at low load an item
 * goes out alone at once (no timer, no added latency).
 *
 * A failed batch is tried again one item at a time, so one bad item fails only its own caller.
 */
interface Waiting<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

export interface StatementGroupOptions<T, R> {
  /**
   * Runs the items together (all of them or none: one statement or one transaction) and answers
   * each item's result, in their order; a write answers nothing.
   */
  run: (items: T[]) => Promise<readonly R[] | void>;
  /** Most items in one batch. */
  maxBatch: number;
  /** Batches in flight at once (each holds a pool connection). */
  maxConcurrent: number;
}

export class StatementGroup<T, R = void> {
  private waiting: Waiting<T, R>[] = [];
  private inFlight = 0;

  constructor(private readonly options: StatementGroupOptions<T, R>) {}

  /** Resolves with `item`'s result once its batch has run; rejects with its own error when it cannot be run. */
  submit(item: T): Promise<R> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.startBatches();
    });
  }

  private startBatches(): void {
    while (this.inFlight < this.options.maxConcurrent && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.options.maxBatch);
      this.inFlight += 1;
      void this.runBatch(batch).finally(() => {
        this.inFlight -= 1;
        this.startBatches();
      });
    }
  }

  private async runOne(w: Waiting<T, R>): Promise<void> {
    try {
      const results = await this.options.run([w.item]);
      w.resolve(results?.[0] as R);
    } catch (error) {
      w.reject(error);
    }
  }

  private async runBatch(batch: Waiting<T, R>[]): Promise<void> {
    if (batch.length === 1) return this.runOne(batch[0]);
    let results: readonly R[] | void;
    try {
      results = await this.options.run(batch.map((w) => w.item));
    } catch {
      // Nothing of the batch took effect: each item alone, so only the bad one fails.
      await Promise.all(batch.map((w) => this.runOne(w)));
      return;
    }
    batch.forEach((w, i) => w.resolve(results?.[i] as R));
  }
}
