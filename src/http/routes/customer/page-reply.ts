import type { FastifyReply } from 'fastify';

/**
 * Customer pages carry a download token in their URL: no Referer may leak it, no shared cache may
 * keep the page, and only this origin's script and stylesheet run.
 */
export const CUSTOMER_PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};

/** Sends a whole customer page with its status. */
export function sendPage(reply: FastifyReply, status: number, page: string): FastifyReply {
  return reply.code(status).headers(CUSTOMER_PAGE_HEADERS).type('text/html; charset=utf-8').send(page);
}
