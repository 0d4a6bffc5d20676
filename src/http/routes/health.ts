import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppDeps } from '../app';

export function healthRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.get('/healthz', {
      schema: { summary: 'The process is up', tags: ['health'], response: { 200: z.object({ ok: z.literal(true) }) } },
    }, async () => ({ ok: true as const }));

    app.get('/readyz', {
      schema: {
        summary: 'The database and Temporal are reachable',
        tags: ['health'],
        response: {
          200: z.object({ ok: z.boolean(), database: z.boolean(), temporal: z.boolean() }),
          503: z.object({ ok: z.boolean(), database: z.boolean(), temporal: z.boolean() }),
        },
      },
    }, async (_request, reply) => {
      const withTimeout = <T>(p: Promise<T>) =>
        Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), 3000).unref())]);
      const [database, temporal] = await Promise.all([
        withTimeout(deps.orm.em.fork().execute('select 1')).then(() => true, () => false),
        withTimeout(deps.fulfilment.ping()).then(() => true, () => false),
      ]);
      const ok = database && temporal;
      return reply.code(ok ? 200 : 503).send({ ok, database, temporal });
    });
  };
}
