import type { FastifyInstance } from 'fastify';
import { eventually } from './webhooks';

/**
 * The organisation's events of `type` that `match`, once one is listed. An event is listed once every
 * transaction begun before its own has ended on the whole PostgreSQL server (a receipt still going
 * out, another test file's): the list catches up, it does not skip.
 */
export function listedEvents<E>(
  app: FastifyInstance, headers: Record<string, string>, type: string, match: (event: E) => boolean, timeoutMs = 30_000,
): Promise<E[]> {
  return eventually(async () => {
    const res = await app.inject({ method: 'GET', url: `/api/events?type=${type}&limit=1000`, headers });
    expect(res.statusCode).toBe(200);
    const found = (res.json() as E[]).filter(match);
    return found.length > 0 ? found : undefined;
  }, timeoutMs, `the ${type} event`);
}
