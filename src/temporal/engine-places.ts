/**
 * Word from a worker to the dispatcher of the same process that a webhook run recorded its items'
 * outcomes, so its place in the engine's budget (DISPATCH_ENGINE_RUNS) is free. With the budget
 * full, a claim finds nothing to start and its loop sleeps until a nudge or its next poll
 * (DISPATCH_POLL_INTERVAL): without this word a freed place waited up to that poll, which held the
 * rate of starts to about a budget a second. Roles in separate processes have no listener: there the
 * poll finds the place.
 */
export class EnginePlaces {
  private readonly listeners = new Set<() => void>();

  /** A run's outcomes were recorded (committed). */
  freed(): void {
    for (const listener of this.listeners) listener();
  }

  /** Calls `listener` on each freed place; returns what stops it. */
  onFreed(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
