import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { OpenAPIV3_1 } from 'openapi-types';
import { z } from 'zod';
import { boundedText, FIELD_LIMITS } from '../../../domain/field-limits';
import { EVENT_TYPES, MAX_ENDPOINTS, type SentEventType } from '../../../domain/outbound-events';
import {
  AttemptJsonSchema, createEndpoint, EVENT_DATA_SCHEMAS, deleteEndpoint, EndpointInputSchema, EndpointJsonSchema, EndpointPatchSchema,
  EventDetailJsonSchema, EventJsonSchema, getEndpoint, getEvent, listAttempts, listEndpoints, listEvents,
  NewEndpointJsonSchema, redeliverEvent, rotateSecret, sendTestPing, TestResultJsonSchema, updateEndpoint,
} from '../../../events/outbound-events';
import type { AppDeps } from '../../app';
import { principalOf } from '../../plugins/principal';
import { pageQuery } from './paging';

const WEBHOOK_HEADERS = [
  { name: 'webhook-id', description: 'the event id (`evt_…`): the same on every attempt; de-duplicate by it' },
  { name: 'webhook-timestamp', description: 'Unix seconds of this attempt' },
  { name: 'webhook-signature', description: '`v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}" keyed with the secret\'s decoded bytes>`; '
    + 'two, space-separated, for 24 h after a rotation' },
];

/**
 * The OpenAPI 3.1 `webhooks` section: one request per event type, with its body's schema. Verify
 * with any Standard Webhooks 1.0 library and the endpoint's secret.
 */
export function openApiWebhooks(): Record<string, OpenAPIV3_1.PathItemObject> {
  const entries = (Object.keys(EVENT_DATA_SCHEMAS) as SentEventType[]).map((type) => [type, {
    post: {
      summary: `${type}: sent to every enabled endpoint subscribed to it${type === 'ping' ? ' (pings: by "send test" only)' : ''}`,
      parameters: WEBHOOK_HEADERS.map((h) => ({ ...h, in: 'header', required: true, schema: { type: 'string' as const } })),
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: z.toJSONSchema(z.object({
              id: z.string(), type: z.literal(type), timestamp: z.string().describe('RFC 3339'), data: EVENT_DATA_SCHEMAS[type],
            }), { unrepresentable: 'any' }) as OpenAPIV3_1.SchemaObject,
          },
        },
      },
      responses: {
        '2XX': { description: 'delivered' },
        410: { description: 'the endpoint is disabled at once' },
        default: { description: 'retried after OUTBOUND_RETRY_SCHEDULE; 15 s per attempt; redirects are not followed' },
      },
    },
  }]);
  return Object.fromEntries(entries);
}

const idParams = z.object({ id: boundedText(FIELD_LIMITS.id) });
const errorSchema = z.object({ error: z.string() });

/**
 * Outbound events (decisions §13): integrators' webhook endpoints, their attempts, redelivery and
 * the events API. Owners and admins only (members 403); another organisation's ids are 404.
 */
export function outboundEventRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  const { allowPrivate } = deps.config.outbound;
  return async (app) => {
    app.post('/api/webhook-endpoints', {
      config: { access: 'admin' },
      schema: {
        summary: 'Add an endpoint for outbound events; its signing secret is in this answer only',
        description: `\`https://\` and a public address (checked after DNS resolution; 400 says what is wrong). \`events\`: the types `
          + `to send, absent or [] = all. At most ${MAX_ENDPOINTS} endpoints per organisation (409).`,
        tags: ['outbound events'],
        body: EndpointInputSchema,
        response: { 201: NewEndpointJsonSchema, 400: errorSchema, 409: errorSchema },
      },
    }, async (request, reply) => reply.code(201).send(
      await createEndpoint(request.em, deps.keyRing, principalOf(request).orgId, request.body, allowPrivate),
    ));

    app.get('/api/webhook-endpoints', {
      config: { access: 'admin' },
      schema: { summary: 'The organisation\'s endpoints (no secrets)', tags: ['outbound events'], response: { 200: z.array(EndpointJsonSchema) } },
    }, async (request) => listEndpoints(request.em, principalOf(request).orgId));

    app.get('/api/webhook-endpoints/:id', {
      config: { access: 'admin' },
      schema: { summary: 'One endpoint (no secret)', tags: ['outbound events'], params: idParams, response: { 200: EndpointJsonSchema } },
    }, async (request) => getEndpoint(request.em, principalOf(request).orgId, request.params.id));

    app.patch('/api/webhook-endpoints/:id', {
      config: { access: 'admin' },
      schema: {
        summary: 'Change an endpoint\'s URL, events, description, or enable or disable it',
        description: 'Re-enabling does not replay what it missed while disabled.',
        tags: ['outbound events'],
        params: idParams,
        body: EndpointPatchSchema,
        response: { 200: EndpointJsonSchema, 400: errorSchema },
      },
    }, async (request) => updateEndpoint(request.em, principalOf(request).orgId, request.params.id, request.body, allowPrivate));

    app.delete('/api/webhook-endpoints/:id', {
      config: { access: 'admin' },
      schema: { summary: 'Delete an endpoint, its deliveries and attempts', tags: ['outbound events'], params: idParams, response: { 204: z.null() } },
    }, async (request, reply) => {
      await deleteEndpoint(request.em, principalOf(request).orgId, request.params.id);
      return reply.code(204).send(null);
    });

    app.post('/api/webhook-endpoints/:id/rotate-secret', {
      config: { access: 'admin' },
      schema: {
        summary: 'A new signing secret, shown in this answer only',
        description: 'For 24 hours every request carries the signatures of both the new and the previous secret (space-separated).',
        tags: ['outbound events'],
        params: idParams,
        response: { 200: z.object({ secret: z.string() }) },
      },
    }, async (request) => rotateSecret(request.em, deps.keyRing, principalOf(request).orgId, request.params.id));

    app.post('/api/webhook-endpoints/:id/test', {
      config: { access: 'admin' },
      schema: {
        summary: 'Send a `ping` event now and tell how the endpoint answered',
        description: 'Pings are logged with the attempts but not kept as events.',
        tags: ['outbound events'],
        params: idParams,
        response: { 200: TestResultJsonSchema },
      },
    }, async (request) => sendTestPing(request.em, deps.keyRing, principalOf(request).orgId, request.params.id, allowPrivate));

    app.get('/api/webhook-endpoints/:id/attempts', {
      config: { access: 'admin' },
      schema: {
        summary: 'The endpoint\'s attempts, newest first, with status, latency and the answer\'s first 1 KB',
        tags: ['outbound events'],
        params: idParams,
        querystring: z.object(pageQuery('attempts', (limit) => limit.default(100))),
        response: { 200: z.array(AttemptJsonSchema) },
      },
    }, async (request) => listAttempts(request.em, principalOf(request).orgId, request.params.id, request.query));

    app.get('/api/events', {
      config: { access: 'admin' },
      schema: {
        summary: 'The organisation\'s events, oldest first: catch up from the last id you have',
        description: '`after`: an event id (it need not be kept any more: ids sort by time). Events are kept EVENT_RETENTION (30 days by default).',
        tags: ['outbound events'],
        querystring: z.object({
          after: boundedText(FIELD_LIMITS.id).optional().describe('the last event id you have'),
          limit: z.coerce.number().int().min(1).max(1000).default(100),
          type: z.enum(EVENT_TYPES).optional(),
        }),
        response: { 200: z.array(EventJsonSchema), 400: errorSchema },
      },
    }, async (request) => listEvents(request.em, principalOf(request).orgId, request.query));

    app.get('/api/events/:id', {
      config: { access: 'admin' },
      schema: {
        summary: 'One event, with its delivery to each endpoint',
        tags: ['outbound events'],
        params: idParams,
        response: { 200: EventDetailJsonSchema },
      },
    }, async (request) => getEvent(request.em, principalOf(request).orgId, request.params.id));

    app.post('/api/events/:id/redeliver', {
      config: { access: 'admin' },
      schema: {
        summary: 'Send the event once more (same webhook-id), to one endpoint or to every endpoint subscribed',
        tags: ['outbound events'],
        params: idParams,
        body: z.object({ endpointId: boundedText(FIELD_LIMITS.id).optional() }).optional(),
        response: { 202: z.object({ ok: z.literal(true) }), 409: errorSchema },
      },
    }, async (request, reply) => {
      await redeliverEvent(request.em, principalOf(request).orgId, request.params.id, request.body?.endpointId);
      deps.dispatcher.recorded(principalOf(request).orgId);
      return reply.code(202).send({ ok: true as const });
    });
  };
}
