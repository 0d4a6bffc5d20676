/**
 * The API process's event-loop delay and GC pauses over a measurement, read from its own `/metrics`
 * (prom-client's default metrics): the event-loop histogram (`monitorEventLoopDelay`) is reset by
 * every scrape, so a scrape just before the measurement starts its window and one just after reads
 * it; the GC histogram is cumulative, so the two scrapes' difference is the window's pauses.
 */
import { scrape, total } from './metrics';

export interface EventLoopVitals {
  eventLoopDelayMs: { p50: number; p99: number; max: number };
  gcPauses: { count: number; totalMs: number; over10Ms: number; over100Ms: number };
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
