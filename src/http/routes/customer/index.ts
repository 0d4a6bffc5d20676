import rateLimit from '@fastify/rate-limit';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { pgRateLimitStore } from '../../plugins/pg-rate-limit-store';
import { customerErrorPage } from '../../views/customer-pages';
import type { AppDeps } from '../../app';
import { customerAssetRoutes } from './assets';
import { downloadFileRoutes } from './download-files';
import { downloadPageRoutes } from './download-page';
import { selfServiceLimiters } from './limits';
import { emailOfMyRequest, myRoutes } from './my';
import { unsubscribeRoutes } from './unsubscribe';

/**
 * What customers touch, without an account: `/d/{token}` with its files, `/my`, `/unsubscribe/{token}`, and the two assets
 * of those pages. Errors render as customer pages; rate limits count in PostgreSQL.
 */
export function customerPageRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.decorate('renderErrorPage', (_request, status, message) => customerErrorPage(status, message));
    // Not global: only the requests that send email count, through the limiters below.
    await app.register(rateLimit, { global: false, store: pgRateLimitStore(deps.orm, deps.clock) });
    const limits = selfServiceLimiters(app, emailOfMyRequest);

    await app.register(customerAssetRoutes());
    await app.register(downloadPageRoutes(deps, limits));
    await app.register(downloadFileRoutes(deps));
    await app.register(myRoutes(deps, limits));
    await app.register(unsubscribeRoutes(deps));
  };
}
