import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SafeHtml } from '../../../templating/html';

export function sendPage(reply: FastifyReply, markup: string): FastifyReply {
  return reply.type('text/html; charset=utf-8').send(markup);
}

export function sendFragment(reply: FastifyReply, fragment: SafeHtml, status = 200): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(fragment.value);
}

/**
 * After a successful form post: htmx follows `HX-Redirect`, a plain form post follows the 303, so
 * the page shows the new state either way (and a reload does not post again).
 */
export function seeOther(request: FastifyRequest, reply: FastifyReply, url: string): FastifyReply {
  if (request.headers['hx-request']) return reply.header('hx-redirect', url).type('text/html; charset=utf-8').send('');
  return reply.redirect(url, 303);
}
