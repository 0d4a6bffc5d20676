import type { FastifyInstance, FastifyRequest } from 'fastify';
import { subscriptionExpired } from '../../domain/subscription';
import { ForbiddenError, UnauthorizedError } from '../../domain/errors';
import { isAdminRole, type Role } from '../../domain/statuses';
import { sha256Hex } from '../../security/secrets';
import type { Orm } from '../../db/orm';
import { preparedRows } from '../../db/sql';

/** Who is calling, once authenticated. */
export interface Principal {
  userId: string;
  orgId: string;
  role: Role;
  /** `key`: an API key (purchases get source `api`); `session`: the dashboard (source `manual`). */
  via: 'key' | 'session';
}

/** Which callers a route admits: any member of an organisation, or owners and admins only. */
export type Access = 'member' | 'admin';

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifyInstance {
    /**
     * Set by the dashboard's session plugin: the signed-in user's id, if any (async: a session is
     * checked against the user's current password). It throws 403 for a state-changing request
     * without the session's CSRF token.
     */
    sessionUserId?: (request: FastifyRequest) => Promise<string | null>;
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

interface UserRow {
  id: string;
  organisation_id: string | null;
  role: Role;
  subscription_expires_on: string | null;
  /** The stored last use is older than a minute (or unset): worth writing again. */
  last_use_stale: boolean;
}

const SELECT_USER = `select u.id, u.organisation_id, u.role, o.subscription_expires_on::text as subscription_expires_on,
    coalesce(u.api_key_last_used_at < now() - interval '1 minute', true) as last_use_stale
  from app_user u left join organisation o on o.id = u.organisation_id`;
const USER_BY_KEY = `${SELECT_USER} where u.api_key_hash = ?`;
const USER_BY_ID = `${SELECT_USER} where u.id = ?`;

/**
 * API-key (Bearer or X-API-Key) or dashboard-session authentication, and the role check, in
 * onRequest: both come before body validation (a member gets 403, not 400).
 */
export function registerAuth(app: FastifyInstance, orm: Orm, clock: () => Date): void {
  app.decorateRequest('principal', null);

  async function authenticate(request: FastifyRequest): Promise<Principal> {
    const key = apiKeyOf(request);
    // Read on every request, never cached: a refreshed key, a changed role or a removed user
    // counts from the next request on, whichever process served the change.
    const em = orm.em.fork();
    let via: Principal['via'];
    let rows: UserRow[];
    if (key) {
      via = 'key';
      rows = await preparedRows<UserRow>(em, USER_BY_KEY, [sha256Hex(key)]);
      if (rows[0]?.last_use_stale) {
        // Best effort and at most once a minute: writing one row on every request would cap every
        // endpoint at that row's update rate.
        void em.execute('update app_user set api_key_last_used_at = now() where id = ?', [rows[0].id]).catch(() => undefined);
      }
    } else {
      const userId = (await app.sessionUserId?.(request)) ?? null;
      if (!userId) throw new UnauthorizedError('missing or invalid API key');
      via = 'session';
      rows = await preparedRows<UserRow>(em, USER_BY_ID, [userId]);
    }
    const user = rows[0];
    if (!user) throw new UnauthorizedError('missing or invalid API key');
    if (!user.organisation_id) throw new ForbiddenError('this user belongs to no organisation');
    if (subscriptionExpired(user.subscription_expires_on, clock())) {
      throw new ForbiddenError('the organisation\'s subscription has expired');
    }
    return { userId: user.id, orgId: user.organisation_id, role: user.role, via };
  }

  app.addHook('onRequest', async (request) => {
    const access = request.routeOptions.config?.access;
    if (!access) return;
    const principal = await authenticate(request);
    if (access === 'admin' && !isAdminRole(principal.role)) throw new ForbiddenError('admin role required');
    request.principal = principal;
  });
}

/** The authenticated caller of a route that declared `access` (always set there). */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new UnauthorizedError('missing or invalid API key');
  return request.principal;
}
