import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../app';
import { publicDir } from '../../../project-files';
import { registerPageGuard } from './guard';
import { overviewRoutes } from './overview';
import { productPageRoutes } from './products';
import { purchasePageRoutes } from './purchases';
import { reportRoutes } from './reports';
import { settingsRoutes } from './settings';
import { signinRoutes } from './signin';
import { webhookLogRoutes } from './webhook-log';

/** Content Security Policy of the dashboard: scripts and styles from this origin only. */
const CSP = [
  "default-src 'self'",
  "img-src 'self' data:",
  "style-src 'self'",
  "frame-src 'self'",
  "frame-ancestors 'none'",
  "form-action 'self'",
  "base-uri 'none'",
  "object-src 'none'",
].join('; ');

/**
 * The dashboard for organisation staff (decisions §8): server-rendered pages and htmx fragments at
 * `/`, beside /api, /webhooks and the customer pages. Sessions and CSRF: plugins/session.ts.
 */
export function dashboardRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  return async (app) => {
    await app.register(fastifyStatic, {
      root: [publicDir(), path.dirname(require.resolve('htmx.org/dist/htmx.min.js'))],
      prefix: '/assets/',
      decorateReply: false,
      maxAge: '1h',
      allowedPath: (pathName) => ['/app.css', '/app.js', '/htmx.min.js'].includes(pathName),
    });

    app.addHook('onRequest', async (request, reply) => {
      reply.header('content-security-policy', CSP);
      reply.header('x-content-type-options', 'nosniff');
      reply.header('referrer-policy', 'same-origin');
      if (!request.url.startsWith('/assets/')) reply.header('cache-control', 'no-store');
    });
    registerPageGuard(app, { hasDevMailbox: deps.devMailbox !== undefined });

    await app.register(signinRoutes(deps));
    await app.register(overviewRoutes(deps));
    await app.register(productPageRoutes(deps));
    await app.register(purchasePageRoutes(deps));
    await app.register(webhookLogRoutes(deps));
    await app.register(reportRoutes(deps));
    await app.register(settingsRoutes(deps));
  };
}
