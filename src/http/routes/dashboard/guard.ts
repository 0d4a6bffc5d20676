import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ForbiddenError, UnauthorizedError } from '../../../domain/errors';
import { isAdminRole } from '../../../domain/statuses';
import { isSafeMethod, type Session } from '../../plugins/session';
import { errorPage } from '../../views/error-page';
import type { PageContext } from '../../views/layout';

declare module 'fastify' {
  interface FastifyRequest {
    pageContext: PageContext | null;
  }
}

const SITE = 'http://site.invalid';
/** Control characters (browsers drop tabs and newlines from URLs) and backslashes (read as `/`). */
// eslint-disable-next-line no-control-regex -- control characters are exactly what it looks for
const UNSAFE = /[\u0000-\u001f\u007f\\]/;

/**
 * Where to go after signing in: a path of this site only. Parsed with the WHATWG URL parser (as
 * browsers parse it) against the site's origin; anything that leaves it, or that a browser would
 * read differently (control characters, backslashes, a path normalised to `//host`), goes to `/`.
 */
export function safeNext(next: string | undefined): string {
  if (!next || !next.startsWith('/') || UNSAFE.test(next)) return '/';
  let url: URL;
  try {
    url = new URL(next, SITE);
  } catch {
    return '/';
  }
  const target = `${url.pathname}${url.search}${url.hash}`;
  return url.origin === SITE && !target.startsWith('//') ? target : '/';
}

/** The viewer of a dashboard route (always set there by the guard). */
export function pageContextOf(request: FastifyRequest): PageContext {
  if (!request.pageContext) throw new UnauthorizedError('sign in first');
  return request.pageContext;
}

/**
 * What dashboard pages know of their viewer, from the session the principal plugin admitted (it
 * also applies the access rules and sends the signed-out to sign-in). State-changing requests need
 * the session's CSRF token, checked here once the form body is parsed. Error pages get the viewer
 * too, when there is one, so a 403 keeps the navigation.
 */
export function registerPageGuard(app: FastifyInstance, options: { hasDevMailbox: boolean }): void {
  const contextOf = (session: Session): PageContext => ({
    user: session.user, csrfToken: session.csrfToken, isAdmin: isAdminRole(session.user.role), hasDevMailbox: options.hasDevMailbox,
  });
  app.decorateRequest('pageContext', null);
  app.decorate('renderErrorPage', (request, status, message) => errorPage(request.session ? contextOf(request.session) : null, status, message));

  app.addHook('onRequest', async (request: FastifyRequest) => {
    if (request.routeOptions.config?.dashboard && request.session) request.pageContext = contextOf(request.session);
  });

  app.addHook('preValidation', async (request: FastifyRequest) => {
    if (!request.routeOptions.config?.dashboard || isSafeMethod(request)) return;
    const session = request.session;
    if (!session || !app.sessions.csrfMatches(request, session)) {
      throw new ForbiddenError('the form has expired (CSRF token missing or invalid): reload the page and try again');
    }
  });
}
