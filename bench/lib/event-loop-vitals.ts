/**
 * The API process's event-loop delay and GC pauses over a measurement, read from its own `/metrics`
 * (prom-client's default metrics): the event-loop histogram (`monitorEventLoopDelay`) is reset by
 * every scrape, so a scrape just before the measurement starts its window and one just after reads
 * it; the GC histogram is cumulative, so the two scrapes' difference is the window's pauses.
 */

export interface EventLoopVitals {
  eventLoopDelayMs: { p50: number; p99: number; max: number };
  gcPauses: { count: number; totalMs: number; over10Ms: number; over100Ms: number };
}

type Samples = Map<string, number>;

/** `name{labels} value` lines of a Prometheus text exposition, keyed by name and labels as written. */
async function scrape(baseUrl: string): Promise<Samples> {
  const response = await fetch(`${baseUrl}/metrics`);
  if (!response.ok) throw new Error(`GET /metrics answered ${response.status}`);
  const samples: Samples = new Map();
  for (const line of (await response.text()).split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    samples.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return samples;
}

/** The sum over every series of `name` whose labels contain `labelPart` (all kinds of GC, say). */
function total(samples: Samples, name: string, labelPart = ''): number {
  let sum = 0;
  for (const [key, value] of samples) {
    if ((key === name || key.startsWith(`${name}{`)) && key.includes(labelPart)) sum += value;
  }
  return sum;
}

const ms = (seconds: number) => Math.round(seconds * 10_000) / 10;

/** Starts a window; the function it returns ends it and answers the window's figures. */
export async function watchEventLoop(baseUrl: string): Promise<() => Promise<EventLoopVitals>> {
  const before = await scrape(baseUrl);
  return async () => {
    const after = await scrape(baseUrl);
    const gcDelta = (name: string, labelPart = '') => total(after, name, labelPart) - total(before, name, labelPart);
    const count = gcDelta('nodejs_gc_duration_seconds_count');
    return {
      eventLoopDelayMs: {
        p50: ms(total(after, 'nodejs_eventloop_lag_p50_seconds')),
        p99: ms(total(after, 'nodejs_eventloop_lag_p99_seconds')),
        max: ms(total(after, 'nodejs_eventloop_lag_max_seconds')),
      },
      gcPauses: {
        count,
        totalMs: ms(gcDelta('nodejs_gc_duration_seconds_sum')),
        // The histogram's buckets are cumulative (`le`): pauses above a bound are all of them less those within it.
        over10Ms: count - gcDelta('nodejs_gc_duration_seconds_bucket', 'le="0.01"'),
        over100Ms: count - gcDelta('nodejs_gc_duration_seconds_bucket', 'le="0.1"'),
      },
    };
  };
}

export function describeVitals(vitals: EventLoopVitals): string {
  const { eventLoopDelayMs: loop, gcPauses: gc } = vitals;
  return `  API event-loop delay p50 ${loop.p50} ms, p99 ${loop.p99} ms, max ${loop.max} ms; `
    + `GC: ${gc.count} pauses, ${gc.totalMs} ms in all, ${gc.over10Ms} over 10 ms, ${gc.over100Ms} over 100 ms`;
}
