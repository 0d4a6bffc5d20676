import cors from '@fastify/cors';
import rateLimit from '@fastify/rate-limit';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { TooManyRequestsError } from '../../domain/errors';
import { boundedText } from '../../domain/field-limits';
import { MAX_POOL_KEY_LENGTH } from '../../domain/license-keys';
import {
  activateLicense, deactivateLicense, LICENSE_NOT_FOUND, SeatsSchema, validateLicense, ValidationJsonSchema, type ValidationJson,
} from '../../licenses/license-activations';
import { sha256Hex } from '../../security/secrets';
import { clientAddressKey } from '../client-address';
import { pgRateLimitStore } from '../plugins/pg-rate-limit-store';
import type { AppDeps } from '../app';
import { rateLimiter } from './customer/limits';

/** Decisions §14: per client address (an IPv6 /64) every call, per key the calls that name it. */
export const LICENSE_API_LIMITS = {
  perIp: { max: 60, windowMs: 60_000 },
  perKey: { max: 30, windowMs: 60_000 },
} as const;

/** The longest installation name an app may send. */
export const MAX_INSTANCE_NAME = 200;

const ErrorSchema = z.object({ error: z.string() });
const KeyField = boundedText(MAX_POOL_KEY_LENGTH).min(1, 'key is required').describe('the license key');
const InstanceIdField = z.uuid('instanceId must be the instanceId that activate answered').max(36);
const InstanceNameField = boundedText(MAX_INSTANCE_NAME)
  .refine((name) => name.trim() !== '', 'instanceName is required')
  .describe('how the buyer recognises this installation (a machine\'s name)');

const ValidateBodySchema = z.object({ key: KeyField, instanceId: InstanceIdField.optional() });

const BODY_TYPES = ['application/json', 'application/x-www-form-urlencoded'];
const DESCRIPTION = 'No API key: the license key is the credential. Body JSON or `application/x-www-form-urlencoded`. '
  + `CORS open. At most ${LICENSE_API_LIMITS.perIp.max} calls a minute per client address (unknown keys included) and `
  + `${LICENSE_API_LIMITS.perKey.max} per key, then 429 with Retry-After.`;

const keyOf = (request: FastifyRequest): unknown => (request.body as { key?: unknown } | undefined)?.key;

/**
 * The public license API (decisions §14) under /licenses, called by the buyers' installed apps and
 * web pages: validate a key, activate an installation, deactivate one. Registered with the prefix
 * `/licenses`, so CORS (and its preflight route) covers these paths only.
 */
export function licenseApiRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  return async (app) => {
    await app.register(cors, { origin: '*', methods: ['POST'], allowedHeaders: ['content-type'], maxAge: 600 });
    // Counted in PostgreSQL, so every API process shares the limits.
    await app.register(rateLimit, { global: false, store: pgRateLimitStore(deps.orm, deps.clock) });
    const perIp = rateLimiter(app, LICENSE_API_LIMITS.perIp, (r) => `license-api:ip:${clientAddressKey(r.ip)}`);
    const perKey = rateLimiter(app, LICENSE_API_LIMITS.perKey, (r) => `license-api:key:${sha256Hex(String(keyOf(r)))}`);
    // The address's count starts before the body is read (a malformed call counts too) and the
    // key's once it is, so that both usually go to the database in one batch; the call waits for
    // both before its body is validated. A preflight is the browser's, not a call.
    const addressCounts = new WeakMap<FastifyRequest, Promise<number | null>>();
    const validateReads = new WeakMap<FastifyRequest, Promise<ValidationJson | undefined>>();
    app.addHook('onRequest', async (request) => {
      if (request.method === 'OPTIONS') return;
      const counted = perIp(request);
      // Awaited in preValidation; a body that fails to parse never gets there.
      counted.catch(() => undefined);
      addressCounts.set(request, counted);
    });
    // Added before the limits' hook: a validate call's read goes out beside its counters instead of
    // after them (apps call it at every start, and each waits one round trip instead of two). A call
    // the limits refuse has read a key it is not told about.
    app.addHook('preValidation', async (request) => {
      if (request.routeOptions.url !== '/licenses/validate') return;
      const parsed = ValidateBodySchema.safeParse(request.body);
      if (!parsed.success) return;
      const read = validateLicense(request.em, parsed.data.key, parsed.data.instanceId ?? null);
      read.catch(() => undefined);
      validateReads.set(request, read);
    });
    app.addHook('preValidation', async (request) => {
      const key = keyOf(request);
      const [addressWait, keyWait] = await Promise.all([
        addressCounts.get(request) ?? null,
        typeof key === 'string' && key !== '' ? perKey(request) : null,
      ]);
      const wait = addressWait ?? keyWait;
      if (wait !== null) throw new TooManyRequestsError(`too many requests: try again in ${wait} s`, wait);
    });

    app.post('/validate', {
      schema: {
        summary: 'Validate a license key (public)',
        description: 'Body `{key, instanceId?}`. `valid` is true when the key is active (its purchase is not revoked or refunded) '
          + 'and, with `instanceId`, that installation is activated and not deactivated. Unknown key: 404 '
          + `\`{valid: false, error: "${LICENSE_NOT_FOUND}"}\`. ${DESCRIPTION}`,
        tags: ['license API'],
        security: [],
        consumes: BODY_TYPES,
        body: ValidateBodySchema,
        response: {
          200: ValidationJsonSchema,
          400: ErrorSchema,
          404: z.object({ valid: z.literal(false), error: z.string() }),
          429: ErrorSchema,
        },
      },
    }, async (request, reply) => {
      const answer = await (validateReads.get(request) ?? validateLicense(request.em, request.body.key, request.body.instanceId ?? null));
      if (!answer) return reply.code(404).send({ valid: false as const, error: LICENSE_NOT_FOUND });
      return answer;
    });

    app.post('/activate', {
      schema: {
        summary: 'Activate an installation of a license key (public)',
        description: 'Body `{key, instanceName}`: takes a seat and answers the `instanceId` to keep (for validate and deactivate). '
          + `At the product's activation limit: 409; a revoked key: 403; unknown key: 404. ${DESCRIPTION}`,
        tags: ['license API'],
        security: [],
        consumes: BODY_TYPES,
        body: z.object({ key: KeyField, instanceName: InstanceNameField }),
        response: {
          201: z.object({ instanceId: z.string(), activations: SeatsSchema }),
          400: ErrorSchema, 403: ErrorSchema, 404: ErrorSchema, 409: ErrorSchema, 429: ErrorSchema,
        },
      },
    }, async (request, reply) => {
      const activated = await activateLicense(request.em, request.body.key, request.body.instanceName.trim());
      deps.dispatcher.recorded(null);
      return reply.code(201).send(activated);
    });

    app.post('/deactivate', {
      schema: {
        summary: 'Deactivate an installation of a license key (public)',
        description: 'Body `{key, instanceId}`: frees its seat (an installation deactivated already stays so). Unknown key or '
          + `instance: 404. ${DESCRIPTION}`,
        tags: ['license API'],
        security: [],
        consumes: BODY_TYPES,
        body: z.object({ key: KeyField, instanceId: InstanceIdField }),
        response: { 200: z.object({ activations: SeatsSchema }), 400: ErrorSchema, 404: ErrorSchema, 429: ErrorSchema },
      },
    }, async (request) => {
      const deactivated = await deactivateLicense(request.em, request.body.key, request.body.instanceId);
      deps.dispatcher.recorded(null);
      return deactivated;
    });
  };
}
