import autocannon from 'autocannon';

export interface LoadFigures {
  title: string;
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  requests: number;
  non2xx: number;
  errors: number;
}

export interface LoadOptions {
  title: string;
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** `[<id>]` in the body is replaced by a fresh id per request. */
  body?: string;
  seconds: number;
  connections?: number;
  /** Changes each request before it is sent (autocannon's setupRequest): spread keys or client addresses. */
  setupRequest?: (request: autocannon.Request) => autocannon.Request;
}

/** One bounded autocannon run against 127.0.0.1. */
export async function load(options: LoadOptions): Promise<LoadFigures> {
  if (new URL(options.url).hostname !== '127.0.0.1') throw new Error('benchmarks send traffic to 127.0.0.1 only');
  const result = await autocannon({
    url: options.url,
    method: options.method ?? 'GET',
    headers: options.headers,
    body: options.body,
    idReplacement: options.body?.includes('[<id>]') ?? false,
    duration: options.seconds,
    connections: options.connections ?? 10,
    ...(options.setupRequest ? { requests: [{ setupRequest: options.setupRequest }] } : {}),
  });
  return {
    title: options.title,
    requestsPerSecond: Math.round(result.requests.average),
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

export interface Comparison {
  bare: LoadFigures;
  real: LoadFigures;
  /** Medians of the per-round ratios: bare/real for throughput, real/bare for latency. */
  ratio: { throughput: number; p50: number; p99: number };
  rounds: number;
}

export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const round2 = (n: number) => Number(n.toFixed(2));

/** Totals over rounds of `seconds` each; latencies are the median of the rounds' percentiles. */
function combine(runs: LoadFigures[], seconds: number): LoadFigures {
  const requests = runs.reduce((sum, r) => sum + r.requests, 0);
  return {
    title: runs[0].title,
    requestsPerSecond: Math.round(requests / (seconds * runs.length)),
    latencyP50Ms: median(runs.map((r) => r.latencyP50Ms)),
    latencyP99Ms: median(runs.map((r) => r.latencyP99Ms)),
    requests,
    non2xx: runs.reduce((sum, r) => sum + r.non2xx, 0),
    errors: runs.reduce((sum, r) => sum + r.errors, 0),
  };
}

/**
 * The baseline and the service in alternating rounds (`seconds` each in total), so that a machine
 * whose load drifts during the run weighs on both sides alike.
 */
export async function compare(
  bare: Omit<LoadOptions, 'seconds'>,
  real: Omit<LoadOptions, 'seconds'>,
  seconds: number,
  rounds = 5,
): Promise<Comparison> {
  const slice = Math.max(1, Math.round(seconds / rounds));
  const bareRuns: LoadFigures[] = [];
  const realRuns: LoadFigures[] = [];
  for (let i = 0; i < rounds; i += 1) {
    bareRuns.push(await load({ ...bare, seconds: slice }));
    realRuns.push(await load({ ...real, seconds: slice }));
  }
  const perRound = bareRuns.map((b, i) => ({ b, r: realRuns[i] }));
  return {
    bare: combine(bareRuns, slice),
    real: combine(realRuns, slice),
    ratio: {
      throughput: round2(median(perRound.map(({ b, r }) => b.requestsPerSecond / Math.max(r.requestsPerSecond, 1)))),
      p50: round2(median(perRound.map(({ b, r }) => r.latencyP50Ms / Math.max(b.latencyP50Ms, 1)))),
      p99: round2(median(perRound.map(({ b, r }) => r.latencyP99Ms / Math.max(b.latencyP99Ms, 1)))),
    },
    rounds,
  };
}

export function describeFigures(f: LoadFigures): string {
  return `${f.title.padEnd(34)} ${String(f.requestsPerSecond).padStart(7)} req/s   p50 ${f.latencyP50Ms} ms   p99 ${f.latencyP99Ms} ms   `
    + `(${f.requests} requests, ${f.non2xx} non-2xx, ${f.errors} errors)`;
}

export function describeComparison(name: string, c: Comparison): string {
  return `${name}: bare/real throughput ${c.ratio.throughput}×, latency real/bare p50 ${c.ratio.p50}× p99 ${c.ratio.p99}× `
    + `(medians of ${c.rounds} alternating rounds)`;
}
