import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import cookie from '@fastify/cookie';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config';
import { isUuid } from '../../domain/uuid';
import { endSession, openSession, sessionUser, type StaffUser } from '../../services/user-sessions';
import { boundedText, FIELD_LIMITS } from '../../domain/field-limits';

/** Sessions end this long after sign-in, whatever happens meanwhile. */
export const SESSION_TTL_MS = 12 * 3_600_000;
export const SESSION_COOKIE = 'dlv_session';
/** The pre-session token of the sign-in form (login CSRF), double-submitted. */
const SIGNIN_COOKIE = 'dlv_signin';
const SIGNIN_TTL_MS = 3_600_000;
/** The form field and the header that carry the CSRF token. */
export const CSRF_FIELD = '_csrf';
export const CSRF_HEADER = 'x-csrf-token';

/** The CSRF field of a dashboard form's body schema. */
export const CSRF_BODY_FIELD = { [CSRF_FIELD]: boundedText(FIELD_LIMITS.token).optional() };

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
export const isSafeMethod = (request: FastifyRequest): boolean => SAFE_METHODS.has(request.method);

/** The signed-in user as the dashboard shows it. */
export type SessionUser = Omit<StaffUser, 'passwordHash'>;

export interface Session {
  /** The server-side session (user_session) the cookie names. */
  id: string;
  user: SessionUser;
  /** The synchronizer token of this session: every state-changing request must carry it. */
  csrfToken: string;
  issuedAt: Date;
}

/** What the dashboard routes use of sessions (decorated on the app as `sessions`). */
export interface Sessions {
  /** The request's valid session, or null (looked up once per request). */
  current(request: FastifyRequest): Promise<Session | null>;
  /**
   * A new session for the user (a fresh id at every sign-in: no fixation), recorded on the server
   * with the request's user agent; returns its id.
   */
  start(request: FastifyRequest, reply: FastifyReply, userId: string, passwordHash: string): Promise<string>;
  /** Ends the request's session on the server and clears its cookie. */
  end(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  /** Whether the request carries the session's CSRF token, in the header or the form field. */
  csrfMatches(request: FastifyRequest, session: Session): boolean;
  /** The sign-in form's token, set in a cookie of its own and echoed in the form. */
  signinToken(request: FastifyRequest, reply: FastifyReply): string;
  signinTokenMatches(request: FastifyRequest, sent: string | undefined): boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    sessions: Sessions;
  }
  interface FastifyRequest {
    sessionLookup: Promise<Session | null> | null;
  }
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function sentToken(request: FastifyRequest): string | undefined {
  const header = request.headers[CSRF_HEADER];
  if (typeof header === 'string' && header) return header;
  const body = request.body as Record<string, unknown> | undefined;
  const field = body && typeof body === 'object' ? body[CSRF_FIELD] : undefined;
  return typeof field === 'string' ? field : undefined;
}

export interface SessionDeps {
  config: Pick<Readonly<Config>, 'baseUrl' | 'sessionIdleTimeoutMs'>;
  clock: () => Date;
  secret: string;
}

/**
 * Dashboard sessions in a signed HttpOnly cookie: `userId.issuedAt.sessionId.fingerprint`, where
 * the fingerprint is a keyed hash of the user's password hash, so changing the password ends every
 * other session at once; the session id names a row of user_session, so the server can end it
 * (sign-out, sign out everywhere, SESSION_IDLE_TIMEOUT) besides the 12-hour cap. The principal plugin reads it for dashboard routes and for /api called
 * from the dashboard (then, for state-changing methods, only with the session's CSRF token in
 * `X-CSRF-Token`; API-key requests cannot be forged cross-site and need none).
 */
export async function registerSession(app: FastifyInstance, deps: SessionDeps): Promise<void> {
  await app.register(cookie, { secret: deps.secret, hook: 'onRequest' });
  app.decorateRequest('sessionLookup', null);

  const keyed = (purpose: string, value: string) =>
    createHmac('sha256', deps.secret).update(`${purpose}\0${value}`).digest('base64url');
  const fingerprint = (passwordHash: string) => keyed('password', passwordHash).slice(0, 22);
  const csrfTokenOf = (sessionId: string) => keyed('csrf', sessionId);
  const cookieOptions = {
    path: '/',
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: deps.config.baseUrl.startsWith('https:'),
    signed: true,
  };

  // The auth plugin's onRequest hook may run before the cookie plugin's: parse here if need be.
  const cookieOf = (request: FastifyRequest, name: string): string | undefined =>
    (request.cookies ?? app.parseCookie(request.headers.cookie ?? ''))[name];

  async function lookup(request: FastifyRequest): Promise<Session | null> {
    const raw = cookieOf(request, SESSION_COOKIE);
    if (!raw) return null;
    const unsigned = request.unsignCookie(raw);
    if (!unsigned.valid || !unsigned.value) return null;
    const parts = unsigned.value.split('.');
    if (parts.length !== 4) return null;
    const [userId, issued, sessionId, print] = parts;
    const issuedAt = Number(issued);
    const now = deps.clock().getTime();
    if (!Number.isSafeInteger(issuedAt) || now - issuedAt >= SESSION_TTL_MS || issuedAt > now + 60_000) return null;
    if (!isUuid(userId)) return null;
    const found = await sessionUser(request.em, sessionId, userId, deps.clock(), deps.config.sessionIdleTimeoutMs);
    if (!found || !safeEqual(fingerprint(found.passwordHash), print)) return null;
    const { passwordHash: _hash, ...user } = found;
    return {
      id: sessionId,
      user,
      csrfToken: csrfTokenOf(sessionId),
      issuedAt: new Date(issuedAt),
    };
  }

  const sessions: Sessions = {
    current(request) {
      request.sessionLookup ??= lookup(request);
      return request.sessionLookup;
    },
    async start(request, reply, userId, passwordHash) {
      const sessionId = randomBytes(16).toString('base64url');
      const now = deps.clock();
      await openSession(request.em, { id: sessionId, userId, userAgent: request.headers['user-agent']?.slice(0, 300) ?? null }, now);
      const value = `${userId}.${now.getTime()}.${sessionId}.${fingerprint(passwordHash)}`;
      reply.setCookie(SESSION_COOKIE, value, { ...cookieOptions, maxAge: SESSION_TTL_MS / 1000 });
      reply.clearCookie(SIGNIN_COOKIE, { path: '/' });
      return sessionId;
    },
    async end(request, reply) {
      const session = await this.current(request);
      if (session) await endSession(request.em, session.id);
      reply.clearCookie(SESSION_COOKIE, { path: '/' });
    },
    csrfMatches(request, session) {
      const sent = sentToken(request);
      return sent !== undefined && safeEqual(sent, session.csrfToken);
    },
    signinToken(request, reply) {
      const raw = cookieOf(request, SIGNIN_COOKIE);
      const unsigned = raw ? request.unsignCookie(raw) : null;
      if (unsigned?.valid && unsigned.value) return unsigned.value;
      const token = randomBytes(16).toString('base64url');
      reply.setCookie(SIGNIN_COOKIE, token, { ...cookieOptions, maxAge: SIGNIN_TTL_MS / 1000 });
      return token;
    },
    signinTokenMatches(request, sent) {
      const raw = cookieOf(request, SIGNIN_COOKIE);
      const unsigned = raw ? request.unsignCookie(raw) : null;
      return Boolean(sent && unsigned?.valid && unsigned.value && safeEqual(sent, unsigned.value));
    },
  };
  app.decorate('sessions', sessions);
}
