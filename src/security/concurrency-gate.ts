/**
 * At most `limit` holders per key at once, in this process. Entering never waits: a full key says
 * no at once, so that the caller can refuse the work before spending anything on it.
 */
export class ConcurrencyGate {
  private readonly held = new Map<string, number>();

  constructor(private readonly limit: number) {}

  /** A function that gives the place back (once, however often it is called), or null when `key` is full. */
  tryEnter(key = ''): (() => void) | null {
    const count = this.held.get(key) ?? 0;
    if (count >= this.limit) return null;
    this.held.set(key, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(key) ?? 1) - 1;
      if (left === 0) this.held.delete(key);
      else this.held.set(key, left);
    };
  }
}
