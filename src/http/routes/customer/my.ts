import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { formBodyOnly } from '../../form-body';
import { myFormPage, myRequestedPage } from '../../views/customer-pages';
import type { AppDeps } from '../../app';
import { requestFreshLinks } from './fresh-links';
import { firstExceeded, sendTooManyRequests, type SelfServiceLimiters } from './limits';
import { sendPage } from './page-reply';
import { isEmailAddress, MAX_EMAIL_LENGTH, normaliseEmail } from '../../../domain/email';


/** The normalised `email` field of a POST /my (after body parsing), for the per-email limit. */
export function emailOfMyRequest(request: FastifyRequest): string {
  const email = (request.body as { email?: unknown } | undefined)?.email;
  return normaliseEmail(typeof email === 'string' ? email : '');
}

const MyForm = z.object({
  email: z.string().max(2000).optional().describe('the email address the purchases were made with'),
});
const PAGE = z.string().describe('HTML page');

/** `/my` (decisions §6): fresh links by email, the same answer for every address. */
export function myRoutes(deps: AppDeps, limits: SelfServiceLimiters): FastifyPluginAsyncZod {
  return async (app) => {
    app.get('/my', {
      config: { errorFormat: 'page' },
      schema: { summary: 'The form to get fresh download links by email', tags: ['customer pages'], response: { 200: PAGE } },
    }, async (_request, reply) => sendPage(reply, 200, myFormPage()));

    app.post('/my', {
      config: { errorFormat: 'page' },
      preValidation: formBodyOnly,
      schema: {
        summary: 'Email fresh download links for every purchase of an address',
        description: 'Form field `email` (no session, so no CSRF token). The answer is the same whether or not the '
          + 'address has purchases; when it has, one email per organisation lists a fresh link for each purchase. '
          + 'Rate limited per client IP (20 per 10 minutes) and per email (5 per hour): 429 with a page.',
        tags: ['customer pages'],
        consumes: ['application/x-www-form-urlencoded', 'multipart/form-data'],
        body: MyForm,
        response: { 200: PAGE, 400: PAGE, 429: PAGE },
      },
    }, async (request, reply) => {
      const ipWait = await firstExceeded(request, limits.perIp);
      if (ipWait !== null) return sendTooManyRequests(reply, ipWait);
      const typed = request.body.email ?? '';
      const email = normaliseEmail(typed);
      if (!isEmailAddress(email)) {
        return sendPage(reply, 400, myFormPage({ error: 'Please enter the email address you used when you bought.', email: typed.slice(0, MAX_EMAIL_LENGTH) }));
      }
      const emailWait = await firstExceeded(request, limits.perEmail);
      if (emailWait !== null) return sendTooManyRequests(reply, emailWait);
      // Started for every address: whether purchases exist is the workflow's business, so the
      // answer and its timing say nothing about it.
      await requestFreshLinks(deps, { email });
      return sendPage(reply, 200, myRequestedPage());
    });
  };
}
