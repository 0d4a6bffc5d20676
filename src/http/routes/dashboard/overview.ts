import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { overviewOf } from '../../../services/overview';
import { overviewPage } from '../../views/overview';
import { principalOf } from '../../plugins/principal';
import type { AppDeps } from '../../app';
import { pageContextOf } from './guard';
import { sendPage } from './replies';

export function overviewRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.get('/', { config: { dashboard: 'member', errorFormat: 'page' }, schema: { hide: true } }, async (request, reply) => {
      const ctx = pageContextOf(request);
      const overview = await overviewOf(request.em, principalOf(request).orgId, deps.clock());
      return sendPage(reply, overviewPage(ctx, overview));
    });
  };
}
