/**
 * A service's own `/metrics` (Prometheus text), read by the benchmarks. A scrape is not free of
 * effects: prom-client's event-loop histogram restarts at each one (see event-loop-vitals.ts).
 */

export type Samples = Map<string, number>;

/** `name{labels} value` lines of a Prometheus text exposition, keyed by name and labels as written. */
export async function scrape(baseUrl: string): Promise<Samples> {
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
export function total(samples: Samples, name: string, labelPart = ''): number {
  let sum = 0;
  for (const [key, value] of samples) {
    if ((key === name || key.startsWith(`${name}{`)) && key.includes(labelPart)) sum += value;
  }
  return sum;
}
