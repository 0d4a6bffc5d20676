import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { overviewOf } from '../../../services/overview';
import { overviewPage } from '../../views/overview';
import { principalOf } from '../../plugins/auth';
import type { AppDeps } from '../../app';
import { pageContextOf } from './guard';

export function overviewRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.get('/', { config: { dashboard: 'member', errorFormat: 'page' }, schema: { hide: true } }, async (request, reply) => {
      const ctx = pageContextOf(request);
      const overview = await overviewOf(deps.orm.em.fork(), principalOf(request).orgId, deps.clock());
      return reply.type('text/html; charset=utf-8').send(overviewPage(ctx, overview));
    });
  };
}
