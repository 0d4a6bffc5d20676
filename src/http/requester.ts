import type { FastifyRequest } from 'fastify';
import type { Requester } from '../services/downloads';

const MAX_USER_AGENT = 512;

/** Who made a request, as the activity log keeps it (the user agent cut to a sane length). */
export function requesterOf(request: FastifyRequest): Requester {
  return { ip: request.ip, userAgent: request.headers['user-agent']?.slice(0, MAX_USER_AGENT) ?? null };
}
