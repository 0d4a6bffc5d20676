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

export function describeFigures(f: LoadFigures): string {
  return `${f.title.padEnd(34)} ${String(f.requestsPerSecond).padStart(7)} req/s   p50 ${f.latencyP50Ms} ms   p99 ${f.latencyP99Ms} ms   `
    + `(${f.requests} requests, ${f.non2xx} non-2xx, ${f.errors} errors)`;
}
