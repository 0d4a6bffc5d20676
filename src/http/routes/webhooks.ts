/**
 * Order webhooks of the sales platforms, one route per adapter of the registry:
 * POST /webhooks/{orgId}/{platform}, or POST /webhooks/{platform} for a platform with one URL for
 * every organisation (payments-c; decisions §4). An encapsulated scope whose only body parser keeps
 * the exact bytes received, whatever the content type: signatures are checked on those bytes and
 * bodies are never re-serialised. /webhooks/{orgId}/download-complete is another plugin's route.
 */
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { countOversizedBody, frontDoorIntake, receiveDelivery, type IntakeTarget } from '../../services/webhook-intake';
import { isPlatform } from '../../domain/platforms';
import { ConcurrencyGate } from '../../security/concurrency-gate';
import type { WebhookRequest } from '../../webhooks/adapter';
import { ADAPTERS } from '../../webhooks/registry';
import type { AppDeps } from '../app';
import { sendError } from '../plugins/error-handler';
import { BacklogReadings } from '../../services/backlog-readings';
import { boundedText, FIELD_LIMITS } from '../../domain/field-limits';

/** Order notifications are small; anything larger is refused with 413 before it is read. */
export const WEBHOOK_BODY_LIMIT = 1024 * 1024;

const ErrorBody = z.object({ error: z.string() });
const Received = z.object({
  received: z.literal(true),
  deliveryIds: z.array(z.string()).describe('one webhook log entry per order; empty for pings and ignored events'),
});
const responses = { 200: Received, 400: ErrorBody, 401: ErrorBody, 404: ErrorBody, 413: ErrorBody, 415: ErrorBody, 503: ErrorBody };
const RawBody = z.unknown().describe('the platform\'s own payload (JSON or form), verified on its exact bytes');

/** The platform word of a webhook route (its last path segment), for the metrics' label. */
function platformOf(request: FastifyRequest): string {
  const route = request.routeOptions.url ?? '';
  return route.startsWith('/webhooks/') ? route.slice(route.lastIndexOf('/') + 1) : 'unknown';
}

function webhookRequestOf(request: FastifyRequest): WebhookRequest {
  const query: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(request.query as Record<string, unknown>)) {
    const first = Array.isArray(value) ? value[0] : value;
    if (typeof first === 'string') query[name] = first;
  }
  return {
    rawBody: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
    headers: request.headers,
    query,
  };
}

export function webhookRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  const intake = frontDoorIntake({
    orm: deps.orm,
    clock: deps.clock,
    keyRing: deps.keyRing,
    onRecorded: (orgId) => deps.dispatcher.recorded(orgId),
    backlog: new BacklogReadings(deps.config.organisationBacklog),
  });

  return async (app) => {
    // Load shedding: past the in-flight limit a delivery is refused before its body is read, in
    // milliseconds, with Retry-After; the platform retries it. Nothing is recorded for it, so
    // nothing is lost, and the deliveries in hand keep the process's time and memory. One
    // organisation (by its path; payments-c's shared route counts as one) holds at most half the
    // places, so its flood leaves the other half to everyone else.
    const everyone = new ConcurrencyGate(deps.config.webhookMaxInFlight);
    const perOrganisation = new ConcurrencyGate(Math.max(1, Math.ceil(deps.config.webhookMaxInFlight / 2)));
    const held = new WeakMap<FastifyRequest, () => void>();
    const release = async (request: FastifyRequest) => {
      held.get(request)?.();
      held.delete(request);
    };
    app.addHook('onRequest', async (request, reply) => {
      const leaveOrganisation = perOrganisation.tryEnter((request.params as { orgId?: string }).orgId ?? 'shared route');
      const leave = leaveOrganisation && everyone.tryEnter();
      if (!leaveOrganisation || !leave) {
        leaveOrganisation?.();
        reply.header('retry-after', '1');
        return sendError(request, reply, 503, 'too many deliveries at once, please retry');
      }
      held.set(request, () => {
        leave();
        leaveOrganisation();
      });
    });
    app.addHook('onResponse', async (request, reply) => {
      await release(request);
      deps.metrics.webhookAcks.inc({ platform: platformOf(request), status: String(reply.statusCode) });
    });
    app.addHook('onRequestAbort', release);
    // A body past the limit never reaches the handler: its refusal is counted here, before the 413
    // goes out. The answer is the same whether or not the count could be written.
    app.addHook('onError', async (request, _reply, error) => {
      const platform = platformOf(request);
      if (error.code !== 'FST_ERR_CTP_BODY_TOO_LARGE' || !isPlatform(platform)) return;
      const orgId = (request.params as { orgId?: string }).orgId ?? null;
      await countOversizedBody(intake, { platform, orgId }).catch((failure: unknown) => {
        request.log.warn({ err: failure }, 'a delivery refused for its size could not be counted');
      });
    });

    // Only in this scope: every content type (JSON, form, none, anything) arrives as a Buffer.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT }, (_request, body, done) => {
      done(null, body);
    });

    async function handle(request: FastifyRequest, target: IntakeTarget) {
      const deliveryIds = await receiveDelivery(intake, target, webhookRequestOf(request));
      return { received: true as const, deliveryIds };
    }

    for (const adapter of ADAPTERS) {
      const { platform } = adapter;
      const shared = adapter.routing.kind === 'shared';
      const schema = {
        summary: `Order notification from ${platform}`,
        description: 'Verified on the raw bytes with the organisation\'s integration secret. 200 once recorded; fulfilment runs afterwards.'
          + (adapter.setupNote ? ` Note: ${adapter.setupNote}.` : ''),
        tags: ['webhooks'],
        security: [],
        consumes: [...adapter.contentTypes],
        body: RawBody,
        response: responses,
      };
      if (shared) {
        app.post(`/webhooks/${platform}`, { bodyLimit: WEBHOOK_BODY_LIMIT, schema }, (request) => handle(request, { platform, orgId: null }));
      } else {
        app.post(`/webhooks/:orgId/${platform}`, {
          bodyLimit: WEBHOOK_BODY_LIMIT,
          schema: { ...schema, params: z.object({ orgId: boundedText(FIELD_LIMITS.id).describe('organisation id') }) },
        }, (request) => handle(request, { platform, orgId: request.params.orgId }));
      }
    }
  };
}
