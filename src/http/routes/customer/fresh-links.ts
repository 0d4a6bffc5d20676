import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { UnavailableError } from '../../../domain/errors';
import type { FreshLinksRequest } from '../../../domain/fresh-links';
import type { AppDeps } from '../../app';

/**
 * Starts the freshLinks workflow for one request (a new request id each time). When Temporal is out
 * of reach the customer gets a 503 page asking to try again, not a hanging request.
 */
export async function requestFreshLinks(deps: AppDeps, target: FreshLinksRequest['target'], log: FastifyBaseLogger): Promise<void> {
  try {
    await deps.fulfilment.freshLinks({ requestId: randomUUID(), target, emailRetryWindowMs: deps.config.emailRetryWindowMs });
  } catch (error) {
    log.warn({ err: error }, 'fresh links could not be started');
    throw new UnavailableError('Links cannot be sent right now. Please try again in a few minutes.');
  }
}
