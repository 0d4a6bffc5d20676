import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { boundedText, FIELD_LIMITS } from '../../../domain/field-limits';
import { noticeSubscription, unsubscribeFromNotices } from '../../../services/version-notifications';
import { unknownUnsubscribePage, unsubscribedPage, unsubscribePage } from '../../views/customer-pages';
import type { AppDeps } from '../../app';
import { sendPage } from './page-reply';

const Params = z.object({ token: boundedText(FIELD_LIMITS.token).describe('the token of the unsubscribe link of an update notice') });
const PAGE = z.string().describe('HTML page');

/**
 * The unsubscribe link of version update notices (decisions §12): a page with one button, and the
 * POST that both the button and a mail client's one-click unsubscribe (RFC 8058:
 * `List-Unsubscribe=One-Click`) send. No session, no CSRF token: the link's token is the proof.
 */
export function unsubscribeRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.get('/unsubscribe/:token', {
      config: { errorFormat: 'page' },
      schema: { summary: 'Confirm stopping update notices', tags: ['customer pages'], params: Params, response: { 200: PAGE, 404: PAGE } },
    }, async (request, reply) => {
      // A GET changes nothing: link scanners in mail systems open every link.
      const found = await noticeSubscription(request.em, request.params.token);
      if (!found) return sendPage(reply, 404, unknownUnsubscribePage());
      return sendPage(reply, 200, found.off ? unsubscribedPage(found) : unsubscribePage({ ...found, token: request.params.token }));
    });

    app.post('/unsubscribe/:token', {
      config: { errorFormat: 'page' },
      schema: {
        summary: 'Stop update notices (the page\'s button and RFC 8058 one-click)',
        description: 'Any body (a mail client sends `List-Unsubscribe=One-Click`). Idempotent.',
        tags: ['customer pages'],
        params: Params,
        response: { 200: PAGE, 404: PAGE },
      },
    }, async (request, reply) => {
      const done = await unsubscribeFromNotices(request.em, request.params.token, deps.clock());
      if (!done) return sendPage(reply, 404, unknownUnsubscribePage());
      return sendPage(reply, 200, unsubscribedPage(done));
    });
  };
}
