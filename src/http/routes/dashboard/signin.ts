import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { BusyError, ForbiddenError } from '../../../domain/errors';
import { sha256Hex } from '../../../security/secrets';
import { passwordChecksInFlight } from '../../password-checks';
import { clientAddressKey } from '../../client-address';
import { clearRateLimit, hitRateLimit } from '../../../services/rate-limits';
import { signInAccount, upgradePasswordHash } from '../../../services/users';
import { formBodyOnly } from '../../form-body';
import { CSRF_BODY_FIELD, CSRF_FIELD } from '../../plugins/session';
import { signinPage } from '../../views/signin';
import type { AppDeps } from '../../app';
import { safeNext } from './guard';
import { normaliseEmail } from '../../../domain/email';
import { setTimeout as sleep } from 'node:timers/promises';
import { boundedText, FIELD_LIMITS } from '../../../domain/field-limits';

/**
 * Sign-in attempts per account from one client address, and per client address, per window (ASVS
 * 6.3.1). Per account *and* address, so nobody can lock a user out from elsewhere. Past a limit the
 * answer is the usual "incorrect" after a delay: it tells a guesser nothing, and slows them down.
 */
export const SIGNIN_LIMITS = { perAccountAndIp: 10, perIp: 100, windowMs: 15 * 60_000, refusedDelayMs: 1_000 } as const;

const WRONG = 'Email or password is incorrect.';

const SigninForm = z.object({
  email: boundedText(FIELD_LIMITS.email).trim().default(''),
  password: boundedText(FIELD_LIMITS.password).default(''),
  next: boundedText(2000).optional(),
  ...CSRF_BODY_FIELD,
});

export function signinRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  return async (app) => {
    // Unknown accounts are checked against this hash, so they cost the same scrypt as known ones.
    const hashForUnknown = deps.passwords.unmatchableHash();

    app.get('/signin', {
      config: { errorFormat: 'page' },
      schema: { hide: true, querystring: z.object({ next: boundedText(2000).optional() }) },
    }, async (request, reply) => {
      const next = safeNext(request.query.next);
      if (await app.sessions.current(request)) return reply.redirect(next, 303);
      const token = app.sessions.signinToken(request, reply);
      return reply.type('text/html; charset=utf-8').send(signinPage({ token, next }));
    });

    app.post('/signin', {
      config: { errorFormat: 'page' },
      preValidation: formBodyOnly,
      schema: { hide: true, body: SigninForm },
    }, async (request, reply) => {
      const { email: typed, password } = request.body;
      const email = normaliseEmail(typed);
      const next = safeNext(request.body.next);
      const again = (status: number, error: string) => reply
        .code(status)
        .type('text/html; charset=utf-8')
        .send(signinPage({ token: app.sessions.signinToken(request, reply), next, email: typed, error }));
      const retryLater = (status: 429 | 503, error: string) => {
        reply.header('retry-after', '1');
        return again(status, error);
      };

      if (!app.sessions.signinTokenMatches(request, request.body[CSRF_FIELD])) {
        return again(403, 'The sign-in form had expired. Please try again.');
      }
      const address = clientAddressKey(request.ip);
      const leave = passwordChecksInFlight.tryEnter(address);
      if (!leave) return retryLater(429, 'Another sign-in from your address is in progress. Please try again in a moment.');
      try {
        const em = request.em;
        const now = deps.clock();
        // Every attempt counts, before the password is even looked at (scrypt is costly); a
        // successful sign-in clears its count, so only failures in a row lock that account there.
        const accountKey = `signin:account-ip:${sha256Hex(email)}:${address}`;
        const [byIp, byAccount] = await Promise.all([
          hitRateLimit(em, `signin:ip:${address}`, SIGNIN_LIMITS.perIp, SIGNIN_LIMITS.windowMs, now),
          hitRateLimit(em, accountKey, SIGNIN_LIMITS.perAccountAndIp, SIGNIN_LIMITS.windowMs, now),
        ]);
        if (!byIp.allowed || !byAccount.allowed) {
          deps.metrics.signinFailures.inc();
          await sleep(SIGNIN_LIMITS.refusedDelayMs);
          return again(401, WRONG);
        }

        const user = await signInAccount(em, email);
        const ok = await deps.passwords.verify(password, user?.passwordHash ?? hashForUnknown);
        if (!user || !ok || !email) {
          deps.metrics.signinFailures.inc();
          return again(401, WRONG);
        }
        await clearRateLimit(em, accountKey);
        const passwordHash = deps.passwords.needsRehash(user.passwordHash)
          ? await upgradePasswordHash(em, deps.passwords, user.id, user.passwordHash, password)
          : user.passwordHash;
        await app.sessions.start(request, reply, user.id, passwordHash);
        return reply.redirect(next, 303);
      } catch (error) {
        if (error instanceof BusyError) return retryLater(503, 'Too many sign-ins at once. Please try again in a moment.');
        throw error;
      } finally {
        leave();
      }
    });

    app.post('/signout', {
      config: { errorFormat: 'page' },
      preValidation: formBodyOnly,
      schema: { hide: true, body: z.object(CSRF_BODY_FIELD) },
    }, async (request, reply) => {
      const session = await app.sessions.current(request);
      if (session && !app.sessions.csrfMatches(request, session)) {
        throw new ForbiddenError('the form has expired (CSRF token missing or invalid): reload the page and try again');
      }
      await app.sessions.end(request, reply);
      return reply.redirect('/signin', 303);
    });
  };
}
