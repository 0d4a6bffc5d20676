import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppDeps } from '../app';

const Readiness = z.object({
  ok: z.boolean().describe('the database answers: deliveries can be recorded'),
  database: z.boolean(),
  temporal: z.boolean().describe('detail, not a failure: deliveries wait in the outbox while Temporal is out of reach'),
  outbox: z.object({
    waiting: z.number().int().describe('workflow starts recorded but not yet taken by Temporal'),
    oldestAgeSeconds: z.number().int().describe('age of the oldest of them'),
    deadLetters: z.number().int().describe('starts Temporal refused for good or too often: their items ended `error` and alerted'),
  }).nullable().describe('null when the database does not answer'),
});

export function healthRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.get('/healthz', {
      schema: { summary: 'The process is up', tags: ['health'], response: { 200: z.object({ ok: z.literal(true) }) } },
    }, async () => ({ ok: true as const }));

    app.get('/readyz', {
      schema: {
        summary: 'Ready to accept work: the database answers (Temporal and the outbox backlog as detail)',
        description: 'Accept = recorded (decisions §4, amended): a process whose database answers accepts deliveries even while '
          + 'Temporal is out of reach, so only the database decides 200 or 503.',
        tags: ['health'],
        response: { 200: Readiness, 503: Readiness },
      },
    }, async (_request, reply) => {
      const withTimeout = <T>(p: Promise<T>) =>
        Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), 3000).unref())]);
      const [outbox, temporal] = await Promise.all([
        withTimeout(deps.metrics.outboxBacklog()).catch(() => null),
        // Bounded by its own deadline, and awaited to its end: a ping left running past the answer could
        // outlive the process's connection to the engine.
        deps.starter.ping().then(() => true, () => false),
      ]);
      const database = outbox !== null;
      return reply.code(database ? 200 : 503).send({ ok: database, database, temporal, outbox });
    });
  };
}
