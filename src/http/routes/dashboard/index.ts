import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../app';
import { errorPage } from '../../views/error-page';
import { registerPageGuard } from './guard';
import { overviewRoutes } from './overview';
import { signinRoutes } from './signin';

/**
 * src/http/public, found from here in the sources (tests, ts-node) and in the build (dist/src/...):
 * the first ancestor that holds package.json is the project root.
 */
function publicDir(): string {
  let dir = __dirname;
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('dashboard assets: project root not found');
    dir = parent;
  }
  return path.join(dir, 'src', 'http', 'public');
}

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
    app.decorate('renderErrorPage', (request, status, message) => errorPage(request.pageContext, status, message));
    registerPageGuard(app, { clock: deps.clock, hasDevMailbox: deps.devMailbox !== undefined });

    await app.register(signinRoutes(deps));
    await app.register(overviewRoutes(deps));
  };
}
