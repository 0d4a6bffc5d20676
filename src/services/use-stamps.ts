/**
 * "Last used" stamps (an API key's, a dashboard session's) written at most once an interval per
 * process. The row says whether its stamp is due, but every request that read it before the first
 * write landed would write it again, each waiting on the row lock with a pooled connection: dozens
 * at a time under load, once an interval.
 */
export class UseStamps {
  /** Keys by when this process last claimed their write, oldest first (a claim moves its key last). */
  private readonly claimed = new Map<string, number>();

  constructor(private readonly intervalMs: number) {}

  /**
   * Runs `write` unless this process claimed the key's write within the interval; a write that fails
   * is forgotten, so the next use retries it. A clock that went back counts as due.
   */
  async write(key: string, now: number, write: () => Promise<void>): Promise<void> {
    const at = this.claimed.get(key);
    if (at !== undefined && now >= at && now - at < this.intervalMs) return;
    this.claimed.delete(key);
    this.claimed.set(key, now);
    this.forgetExpired(now);
    try {
      await write();
    } catch (error) {
      this.claimed.delete(key);
      throw error;
    }
  }

  /** Drops the claims past the interval from the front: only keys used within it are kept. */
  private forgetExpired(now: number): void {
    for (const [key, at] of this.claimed) {
      if (now >= at && now - at < this.intervalMs) return;
      this.claimed.delete(key);
    }
  }
}
