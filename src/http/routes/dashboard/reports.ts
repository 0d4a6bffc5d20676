import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { reportsPage } from '../../views/reports';
import type { AppDeps } from '../../app';
import { pageContextOf } from './guard';
import { sendPage } from './replies';

/** Reports (owners and admins): a date range, downloaded as CSV from GET /api/reports/downloads. */
export function reportRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.get('/reports', { config: { dashboard: 'admin', errorFormat: 'page' }, schema: { hide: true } }, async (request, reply) =>
      sendPage(reply, reportsPage(pageContextOf(request), deps.clock())));
  };
}
