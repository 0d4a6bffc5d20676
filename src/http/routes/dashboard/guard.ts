import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ForbiddenError, UnauthorizedError } from '../../../domain/errors';
import { isAdminRole } from '../../../domain/statuses';
import { subscriptionExpired } from '../../../domain/subscription';
import type { Access } from '../../plugins/auth';
import { isSafeMethod } from '../../plugins/session';
import type { PageContext } from '../../views/layout';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A dashboard route: who may use it (enforced here, on the server, for every request). */
    dashboard?: Access;
  }
  interface FastifyRequest {
    pageContext: PageContext | null;
  }
}

/** Where to go after signing in: only a path of this site (no `//host`, no scheme). */
export function safeNext(next: string | undefined): string {
  return next && /^\/(?![/\\])/.test(next) ? next : '/';
}

/** The viewer of a dashboard route (always set there by the guard). */
export function pageContextOf(request: FastifyRequest): PageContext {
  if (!request.pageContext) throw new UnauthorizedError('sign in first');
  return request.pageContext;
}

/**
 * The dashboard's access rules, for routes with `config.dashboard`: signed out, a page visit goes
 * to the sign-in form (anything else is 401); then organisation, subscription and role, exactly as
 * the API checks them for a key (403 page). State-changing requests need the session's CSRF
 * token, checked once the form body is parsed.
 */
export function registerPageGuard(app: FastifyInstance, options: { clock: () => Date; hasDevMailbox: boolean }): void {
  app.decorateRequest('pageContext', null);

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const access = request.routeOptions.config?.dashboard;
    if (!access) return;
    const session = await app.sessions.current(request);
    if (!session) {
      if (request.method === 'GET' && !request.headers['hx-request']) {
        return reply.redirect(`/signin?next=${encodeURIComponent(request.url)}`, 303);
      }
      throw new UnauthorizedError('your session has ended: sign in again');
    }
    const { user } = session;
    request.pageContext = {
      user, csrfToken: session.csrfToken, isAdmin: isAdminRole(user.role), hasDevMailbox: options.hasDevMailbox,
    };
    if (!user.orgId) throw new ForbiddenError('this account belongs to no organisation');
    if (subscriptionExpired(user.subscriptionExpiresOn, options.clock())) {
      throw new ForbiddenError('the organisation\'s subscription has expired');
    }
    if (access === 'admin' && !isAdminRole(user.role)) throw new ForbiddenError('only owners and admins may use this page');
    request.principal = { userId: user.id, orgId: user.orgId, role: user.role, via: 'session' };
  });

  app.addHook('preValidation', async (request: FastifyRequest) => {
    if (!request.routeOptions.config?.dashboard || isSafeMethod(request)) return;
    const session = await app.sessions.current(request);
    if (!session || !app.sessions.csrfMatches(request, session)) {
      throw new ForbiddenError('the form has expired (CSRF token missing or invalid): reload the page and try again');
    }
  });
}
