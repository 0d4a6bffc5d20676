import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { uniqueViolationMessage } from '../../db/unique-keys';
import { BacklogFullError, DomainError } from '../../domain/errors';
import { ObjectTooLargeError } from '../../storage/file-storage';
import { html } from '../../templating/html';

/** How a route writes its errors: JSON `{error}` (default), an HTML fragment, plain text, or a page. */
export type ErrorFormat = 'json' | 'html-fragment' | 'text' | 'page';

declare module 'fastify' {
  interface FastifyContextConfig {
    errorFormat?: ErrorFormat;
  }
  interface FastifyInstance {
    /** Decorated by a plugin whose routes answer whole pages (the dashboard): renders a `page` error. */
    renderErrorPage?: (request: FastifyRequest, status: number, message: string) => string;
  }
}

export function errorFormatOf(request: FastifyRequest): ErrorFormat {
  return request.routeOptions.config?.errorFormat ?? 'json';
}

/** Renders an error in the route's format. Pages are rendered by the page layer when present. */
export function sendError(request: FastifyRequest, reply: FastifyReply, status: number, message: string): FastifyReply {
  const format = errorFormatOf(request);
  reply.code(status);
  if (format === 'text') return reply.type('text/plain; charset=utf-8').send(`${message}\n`);
  if (format === 'page' && request.server.renderErrorPage) {
    return reply.type('text/html; charset=utf-8').send(request.server.renderErrorPage(request, status, message));
  }
  if (format === 'html-fragment' || format === 'page') {
    return reply
      .type('text/html; charset=utf-8')
      .send(html`<div class="error" role="alert" data-status="${status}">${message}</div>`.toString());
  }
  return reply.send({ error: message });
}

function describeValidation(error: FastifyError): string {
  if (hasZodFastifySchemaValidationErrors(error)) {
    const first = error.validation[0];
    const where = first.instancePath.replace(/^\//, '').replace(/\//g, '.');
    const field = where || (first.params as { issue?: { path?: unknown[] } })?.issue?.path?.join('.') || '';
    return field ? `${field}: ${first.message}` : (first.message ?? 'invalid request');
  }
  return error.message;
}

/**
 * A malformed multipart body (no or bad boundary, cut short) surfaces from busboy, under
 * @fastify/multipart, as a plain Error without a status: the client's mistake, not a 500.
 */
const MALFORMED_MULTIPART = /^(Multipart: Boundary not found|Unsupported Content-Type\.|Unexpected end of multipart data|\w+ terminated early due to unexpected end of multipart data|The needle cannot)/;

const NOT_FOUND_PAGE = '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
  '<meta name="viewport" content="width=device-width, initial-scale=1"><title>Page not found</title></head>' +
  '<body style="font-family:system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem">' +
  '<main><h1>Page not found</h1><p>There is no page at this address.</p><p><a href="/">Go to the dashboard</a></p></main></body></html>';

/**
 * Every database connection busy past the pool's acquire timeout (knex's KnexTimeoutError, which
 * MikroORM may wrap in a DriverException) is overload, not a bug: the caller (a sales platform's
 * retry, a browser) may try again.
 */
function isPoolExhausted(error: Error): boolean {
  return error.name === 'KnexTimeoutError' || /Timeout acquiring a connection/.test(error.message);
}

/** The one error handler: domain errors keep their status, 4xx keep theirs, 5xx never leak. */
export function registerErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof BacklogFullError) reply.header('retry-after', String(error.retryAfterSeconds));
    if (error instanceof DomainError) return sendError(request, reply, error.status, error.message);
    if (error instanceof ObjectTooLargeError) return sendError(request, reply, 413, error.message);
    const conflict = uniqueViolationMessage(error);
    if (conflict !== null) return sendError(request, reply, 409, conflict);
    if (error.validation) return sendError(request, reply, 400, describeValidation(error));
    if (error.statusCode === undefined && MALFORMED_MULTIPART.test(error.message)) {
      return sendError(request, reply, 400, 'malformed multipart body');
    }
    const status = error.statusCode ?? (isPoolExhausted(error) ? 503 : 500);
    if (status >= 400 && status < 500) return sendError(request, reply, status, error.message);
    request.log.error({ err: error }, 'request failed');
    return sendError(request, reply, status === 503 ? 503 : 500, status === 503 ? 'service unavailable' : 'internal server error');
  });
  app.setNotFoundHandler((request, reply) => {
    // A person who mistypes a page address gets a page; API and webhook clients keep `{error}`.
    const machinePath = /^\/(api|webhooks)(\/|$)/.test(request.url);
    if (!machinePath && (request.headers.accept ?? '').includes('text/html')) {
      return reply.code(404).type('text/html; charset=utf-8').send(NOT_FOUND_PAGE);
    }
    return sendError(request, reply, 404, 'not found');
  });
}
