import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ForbiddenError } from '../../../domain/errors';
import { hashPassword, randomSecret, sha256Hex, verifyPassword } from '../../../security/secrets';
import { clearRateLimit, hitRateLimit } from '../../../services/rate-limits';
import { signInAccount } from '../../../services/users';
import { formBodyOnly } from '../../form-body';
import { CSRF_BODY_FIELD, CSRF_FIELD } from '../../plugins/session';
import { signinPage } from '../../views/signin';
import type { AppDeps } from '../../app';
import { safeNext } from './guard';
import { normaliseEmail } from '../../../domain/email';
import { boundedText, FIELD_LIMITS } from '../../../domain/field-limits';

/** Sign-in attempts per account and per client address, per window (ASVS 6.3.1). */
export const SIGNIN_LIMITS = { perEmail: 10, perIp: 100, windowMs: 15 * 60_000 } as const;

const WRONG = 'Email or password is incorrect.';

const SigninForm = z.object({
  email: boundedText(FIELD_LIMITS.email).trim().default(''),
  password: boundedText(FIELD_LIMITS.password).default(''),
  next: z.string().max(2000).optional(),
  ...CSRF_BODY_FIELD,
});

export function signinRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  return async (app) => {
    // Unknown accounts are checked against this hash, so they cost the same scrypt as known ones.
    let dummyHash: Promise<string> | undefined;
    const hashForUnknown = () => (dummyHash ??= hashPassword(randomSecret()));

    app.get('/signin', {
      config: { errorFormat: 'page' },
      schema: { hide: true, querystring: z.object({ next: z.string().max(2000).optional() }) },
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

      if (!app.sessions.signinTokenMatches(request, request.body[CSRF_FIELD])) {
        return again(403, 'The sign-in form had expired. Please try again.');
      }
      const em = request.em;
      const now = deps.clock();
      // Every attempt counts, before the password is even looked at (scrypt is costly); a
      // successful sign-in clears its account's count, so only failures in a row lock it.
      const emailKey = `signin:email:${sha256Hex(email)}`;
      const [byIp, byEmail] = await Promise.all([
        hitRateLimit(em, `signin:ip:${request.ip}`, SIGNIN_LIMITS.perIp, SIGNIN_LIMITS.windowMs, now),
        hitRateLimit(em, emailKey, SIGNIN_LIMITS.perEmail, SIGNIN_LIMITS.windowMs, now),
      ]);
      if (!byIp.allowed || !byEmail.allowed) {
        const until = new Date(Math.max(byIp.allowed ? 0 : byIp.resetAt.getTime(), byEmail.allowed ? 0 : byEmail.resetAt.getTime()));
        const minutes = Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 60_000));
        reply.header('retry-after', String(minutes * 60));
        return again(429, `Too many sign-in attempts. Please wait ${minutes} minute${minutes === 1 ? '' : 's'} and try again.`);
      }

      const user = await signInAccount(em, email);
      const ok = await verifyPassword(password, user?.passwordHash ?? await hashForUnknown());
      if (!user || !ok || !email) return again(401, WRONG);
      await clearRateLimit(em, emailKey);
      app.sessions.start(reply, user.id, user.passwordHash);
      return reply.redirect(next, 303);
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
      app.sessions.end(reply);
      return reply.redirect('/signin', 303);
    });
  };
}
