/**
 * At most MAX_IN_FLIGHT_PER_ENDPOINT requests to one endpoint from one worker process at once (the
 * cap across processes is the endpoint's leased slots, endpoint-lease-store.ts, taken inside this).
 * An attempt waits its turn for a while (first come, first served); past that, or when the line is
 * already long, it answers `busy` and its run tries again a little later, so requests waiting on a
 * slow endpoint hold few of the worker's activity slots and none of another endpoint's.
 */
export class EndpointSlots {
  private readonly endpoints = new Map<string, { active: number; line: Array<() => void> }>();

  constructor(private readonly perEndpoint: number, private readonly maxLine: number) {}

  /** Runs `work` in one of the endpoint's slots, or returns `busy` without running it. */
  async run<T>(endpointId: string, maxWaitMs: number, work: () => Promise<T>): Promise<{ busy: true } | { busy: false; value: T }> {
    let state = this.endpoints.get(endpointId);
    if (!state) {
      state = { active: 0, line: [] };
      this.endpoints.set(endpointId, state);
    }
    if (state.active >= this.perEndpoint) {
      if (state.line.length >= this.maxLine) return { busy: true };
      const line = state.line;
      const served = await new Promise<boolean>((resolve) => {
        const turn = () => {
          clearTimeout(timer);
          resolve(true);
        };
        const timer = setTimeout(() => {
          line.splice(line.indexOf(turn), 1);
          resolve(false);
        }, maxWaitMs);
        line.push(turn);
      });
      // A turn is handed over with its slot still counted, so nobody can take it in between.
      if (!served) return { busy: true };
    } else {
      state.active += 1;
    }
    try {
      return { busy: false, value: await work() };
    } finally {
      const next = state.line.shift();
      if (next) next();
      else {
        state.active -= 1;
        if (state.active === 0) this.endpoints.delete(endpointId);
      }
    }
  }
}
