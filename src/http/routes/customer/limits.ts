import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sha256Hex } from '../../../security/secrets';
import { clientAddressKey } from '../../client-address';
import { tooManyRequestsPage } from '../../views/customer-pages';
import { sendPage } from './page-reply';

/**
 * Limits of the requests that send links by email (decisions §6), counted in PostgreSQL so every
 * API process shares them: per client address (an IPv6 /64) across /my and the "email me a fresh link" button, per
 * email address on /my, per link on the button. Addresses and tokens are hashed in the keys.
 */
export const SELF_SERVICE_LIMITS = {
  perIp: { max: 20, windowMs: 10 * 60_000 },
  perEmail: { max: 5, windowMs: 60 * 60_000 },
  perLink: { max: 5, windowMs: 60 * 60_000 },
} as const;

/** Counts the request; answers the seconds to wait when it is over the limit, else null. */
export type Limiter = (request: FastifyRequest) => Promise<number | null>;

export interface SelfServiceLimiters {
  perIp: Limiter;
  /** Keyed by the email address that `emailOf` reads from the request. */
  perEmail: Limiter;
  /** Keyed by the `token` path parameter. */
  perLink: Limiter;
}

/**
 * A limiter on @fastify/rate-limit, registered with the PostgreSQL store (pgRateLimitStore) in the
 * scope of `app`; `key` names the counter (namespaced by the caller, secrets hashed).
 */
export function rateLimiter(app: FastifyInstance, limit: { max: number; windowMs: number }, key: (request: FastifyRequest) => string): Limiter {
  const check = app.createRateLimit({ max: limit.max, timeWindow: limit.windowMs, keyGenerator: key });
  return async (request) => {
    const verdict = await check(request);
    return !verdict.isAllowed && verdict.isExceeded ? Math.max(1, verdict.ttlInSeconds) : null;
  };
}

/** Builds the limiters on @fastify/rate-limit (registered with the PostgreSQL store in this scope). */
export function selfServiceLimiters(app: FastifyInstance, emailOf: (request: FastifyRequest) => string): SelfServiceLimiters {
  return {
    perIp: rateLimiter(app, SELF_SERVICE_LIMITS.perIp, (r) => `self-service:ip:${clientAddressKey(r.ip)}`),
    perEmail: rateLimiter(app, SELF_SERVICE_LIMITS.perEmail, (r) => `self-service:email:${sha256Hex(emailOf(r))}`),
    perLink: rateLimiter(app, SELF_SERVICE_LIMITS.perLink, (r) => `self-service:link:${sha256Hex((r.params as { token: string }).token)}`),
  };
}

/** Runs the limiters in order (a request refused by one is not counted by the next); null when all pass. */
export async function firstExceeded(request: FastifyRequest, ...limiters: Limiter[]): Promise<number | null> {
  for (const limiter of limiters) {
    const wait = await limiter(request);
    if (wait !== null) return wait;
  }
  return null;
}

/** The friendly 429 page, with Retry-After. */
export function sendTooManyRequests(reply: FastifyReply, retryAfterSeconds: number): FastifyReply {
  return sendPage(reply.header('retry-after', String(retryAfterSeconds)), 429, tooManyRequestsPage(retryAfterSeconds));
}
