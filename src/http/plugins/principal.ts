/**
 * One principal per request: an API key (Bearer or X-API-Key) or the dashboard session, read once,
 * then the one access check (src/domain/access) for /api routes (`config.access`) and dashboard
 * pages and fragments (`config.dashboard`). Runs in onRequest, before body validation, so a member
 * gets 403 rather than 400. Read on every request, never cached across requests: a refreshed key,
 * a changed role or a removed user counts from the next request on, whichever process served it.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { admit, type Access, type Caller, type Principal } from '../../domain/access';
import { ForbiddenError, UnauthorizedError } from '../../domain/errors';
import { keyOwner } from '../../services/api-keys';
import { isSafeMethod, type Session } from './session';

export type { Access, Principal } from '../../domain/access';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** An /api route: who may call it, with a key or with the dashboard session. */
    access?: Access;
    /** A dashboard page or fragment: who may use it (signed out, a page visit goes to sign-in). */
    dashboard?: Access;
  }
  interface FastifyRequest {
    principal: Principal | null;
    /** The dashboard session behind `principal`, when there is one. */
    session: Session | null;
  }
}

function apiKeyOf(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header === 'string') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (match) return match[1];
  }
  const key = request.headers['x-api-key'];
  return typeof key === 'string' && key.trim() ? key.trim() : null;
}

export function registerPrincipal(app: FastifyInstance, clock: () => Date): void {
  app.decorateRequest('principal', null);
  app.decorateRequest('session', null);

  async function keyCaller(request: FastifyRequest, key: string): Promise<Caller> {
    const owner = await keyOwner(request.em, key);
    if (!owner) throw new UnauthorizedError('missing or invalid API key');
    return { ...owner, via: 'key' };
  }

  function sessionCaller(session: Session): Caller {
    const { user } = session;
    return { userId: user.id, orgId: user.orgId, role: user.role, subscriptionExpiresOn: user.subscriptionExpiresOn, catalogueVersion: user.catalogueVersion, via: 'session' };
  }

  /** /api: a key, else the session (whose user it already read); state changes need its CSRF header. */
  async function apiCaller(request: FastifyRequest): Promise<Caller> {
    const key = apiKeyOf(request);
    if (key) return keyCaller(request, key);
    const session = await app.sessions.current(request);
    if (!session) throw new UnauthorizedError('missing or invalid API key');
    if (!isSafeMethod(request) && !app.sessions.csrfMatches(request, session)) {
      throw new ForbiddenError('CSRF token missing or invalid: send the X-CSRF-Token header of the dashboard page');
    }
    request.session = session;
    return sessionCaller(session);
  }

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const config = request.routeOptions.config;
    if (config?.access) {
      request.principal = admit(await apiCaller(request), config.access, clock());
      return;
    }
    if (!config?.dashboard) return;
    const session = await app.sessions.current(request);
    if (!session) {
      if (request.method === 'GET' && !request.headers['hx-request']) {
        return reply.redirect(`/signin?next=${encodeURIComponent(request.url)}`, 303);
      }
      throw new UnauthorizedError('your session has ended: sign in again');
    }
    request.session = session;
    request.principal = admit(sessionCaller(session), config.dashboard, clock());
  });
}

/** The admitted caller of a route that declared `access` or `dashboard` (always set there). */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new UnauthorizedError('missing or invalid API key');
  return request.principal;
}
