/**
 * Outbound events (decisions §13): the one module that reads and writes their tables
 * (`webhook_endpoint`, `outbound_event`, `outbound_delivery`, `outbound_attempt`). Events themselves
 * are written by the triggers of the outbound-events migration, in the transaction of their change;
 * everything else is here: endpoints and their sealed secrets, the events API, each delivery's
 * state and attempts, redelivery, the test ping, retention and the gauges.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { randomBytes } from 'node:crypto';
import { organisationStaffEmails } from '../accounts/account-store';
import { z } from 'zod';
import { isoUtc, sql, statement, type NoRows, type Parameters, type Sql } from '../db/sql';
import { ConflictError, NotFoundError, ValidationError } from '../domain/errors';
import { boundedText } from '../domain/field-limits';
import {
  DELIVERY_STATES, EVENT_ID_RE, EVENT_TYPES, MAX_ENDPOINTS, ROTATION_OVERLAP_MS,
  type AttemptOutcome, type EventType, type SentEventType,
} from '../domain/outbound-events';
import { isUuid } from '../domain/uuid';
import { outboundDeliveryWorkflowId } from '../domain/ids';
import type { NewDispatch } from '../domain/dispatch';
import { LicenseEventDataSchema } from '../licenses/license-activations';
import { PurchaseJsonSchema, purchasesAsRecorded } from '../purchases/purchase-store';
import { completedDownloads } from '../purchases/link-store';
import type { KeyRing } from '../security/key-ring';
import { openSecret, sealSecret } from '../security/sealed-secrets';
import { deliveriesByIds, DeliveryJsonSchema } from '../services/webhook-log';
import { enqueueDispatches } from '../services/workflow-outbox';
import { checkEndpointUrl } from './addresses';
import { sendWebhook, type AttemptResult } from './sender';

/** The longest URL accepted: an endpoint's, or a platform's order-API origin (reconciliation). */
export const URL_LIMIT = 2000;
const DESCRIPTION_LIMIT = 500;

// ---------------------------------------------------------------------------------------------
// Schemas of the API (and of the OpenAPI `webhooks` section)
// ---------------------------------------------------------------------------------------------

export const EndpointJsonSchema = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.enum(EVENT_TYPES)).describe('the event types sent; [] = all'),
  description: z.string(),
  enabled: z.boolean(),
  disabledReason: z.string().nullable().describe('why deliveries disabled it (410, failing too long); null otherwise'),
  createdAt: z.string(),
});
export type EndpointJson = z.infer<typeof EndpointJsonSchema>;

export const NewEndpointJsonSchema = EndpointJsonSchema.extend({
  secret: z.string().describe('`whsec_` + base64 of 32 random bytes: shown in this answer only'),
});

const EventTypesSchema = z.array(z.enum(EVENT_TYPES)).max(EVENT_TYPES.length).describe(`event types to send (${EVENT_TYPES.join(', ')}); absent or [] = all`);

export const EndpointInputSchema = z.object({
  url: boundedText(URL_LIMIT).describe('https:// and a public address (OUTBOUND_WEBHOOKS_ALLOW_PRIVATE lifts both)'),
  events: EventTypesSchema.optional(),
  description: boundedText(DESCRIPTION_LIMIT).optional(),
});
export type EndpointInput = z.infer<typeof EndpointInputSchema>;

export const EndpointPatchSchema = EndpointInputSchema.partial().extend({ enabled: z.boolean().optional() });
export type EndpointPatch = z.infer<typeof EndpointPatchSchema>;

export const DownloadCompletedDataSchema = z.object({
  purchaseId: z.string(), productId: z.string(), fileId: z.string().nullable(), fileName: z.string().nullable(),
  bytes: z.number().nullable(), completedAt: z.string(),
});

/** Each event type's `data`: the resource as the REST API shows it. */
export const EVENT_DATA_SCHEMAS = {
  'purchase.created': PurchaseJsonSchema,
  'purchase.revoked': PurchaseJsonSchema,
  'purchase.restored': PurchaseJsonSchema,
  'receipt.failed': PurchaseJsonSchema,
  'download.completed': DownloadCompletedDataSchema,
  'delivery.failed': DeliveryJsonSchema,
  'license.activated': LicenseEventDataSchema,
  'license.deactivated': LicenseEventDataSchema,
  ping: z.object({ endpointId: z.string() }),
} satisfies Record<SentEventType, z.ZodType>;

/** An event as sent (the request body) and as GET /api/events lists it. */
export const EventJsonSchema = z.object({
  id: z.string().describe('`evt_…`: the `webhook-id` of every request that carries it'),
  type: z.enum(EVENT_TYPES),
  timestamp: z.string().describe('RFC 3339: when the change happened'),
  data: z.unknown().describe('the resource as the REST API shows it (see the `webhooks` section)'),
});
export type EventJson = z.infer<typeof EventJsonSchema>;

export const EventDetailJsonSchema = EventJsonSchema.extend({
  deliveries: z.array(z.object({ endpointId: z.string(), state: z.enum(DELIVERY_STATES), attempts: z.number().int() })),
});

export const AttemptJsonSchema = z.object({
  id: z.string().describe('for `after`'),
  eventId: z.string(),
  type: z.string(),
  attempt: z.number().int(),
  at: z.string(),
  status: z.number().int().nullable().describe('the HTTP status; null when no answer came'),
  error: z.string().nullable(),
  durationMs: z.number().int(),
  responseExcerpt: z.string().describe('the first 1 KB of the answer'),
});
export type AttemptJson = z.infer<typeof AttemptJsonSchema>;

export const TestResultJsonSchema = z.object({ status: z.number().int().nullable(), durationMs: z.number().int(), error: z.string().nullable() });

// ---------------------------------------------------------------------------------------------
// Endpoints
// ---------------------------------------------------------------------------------------------

/** A new signing secret: `whsec_` + base64 of 32 random bytes (the form Standard Webhooks libraries take). */
function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** A new event id for a ping (kept events get theirs from the database, in the same form). */
function pingEventId(): string {
  const micros = BigInt(Date.now()) * 1000n;
  return `evt_${micros.toString(16).padStart(14, '0')}${randomBytes(6).toString('hex')}`;
}

const ENDPOINT_COLUMNS = sql`id, url, events, description, enabled, disabled_reason as "disabledReason", ${isoUtc('created_at')} as "createdAt"`;
const ENDPOINT_JSON = { id: true, url: true, events: true, description: true, enabled: true, disabledReason: true, createdAt: true } as const;

const endpointById = statement<EndpointJson, { endpointId: string; orgId: string }>(
  ENDPOINT_JSON, (p) => sql`select ${ENDPOINT_COLUMNS} from webhook_endpoint where id = ${p.endpointId} and organisation_id = ${p.orgId}`,
);

const endpointsOf = statement<EndpointJson, { orgId: string }>(
  ENDPOINT_JSON, (p) => sql`select ${ENDPOINT_COLUMNS} from webhook_endpoint where organisation_id = ${p.orgId} order by created_at, id`,
);

/** One endpoint of the organisation: another organisation's id, or no id at all, is 404. */
export async function getEndpoint(em: EntityManager, orgId: string, endpointId: string): Promise<EndpointJson> {
  const row = isUuid(endpointId) ? await endpointById.first(em, { endpointId, orgId }) : undefined;
  if (!row) throw new NotFoundError('webhook endpoint not found');
  return row;
}

export async function listEndpoints(em: EntityManager, orgId: string): Promise<EndpointJson[]> {
  return endpointsOf.rows(em, { orgId });
}

const lockEndpoints = statement<{ locked: unknown }, { orgId: string }>(
  { locked: true }, (p) => sql`select pg_advisory_xact_lock(hashtext('webhook_endpoint:' || ${p.orgId}::text)) as locked`,
);

const insertEndpoint = statement<EndpointJson, { orgId: string; url: string; events: string; description: string; secret: string; max: number }>(
  ENDPOINT_JSON,
  (p) => sql`insert into webhook_endpoint (id, organisation_id, url, events, description, enabled, secret, created_at)
       select gen_random_uuid(), ${p.orgId}, ${p.url}, ${p.events}::jsonb, ${p.description}, true, ${p.secret}, now()
       where (select count(*) from webhook_endpoint where organisation_id = ${p.orgId}) < ${p.max}
       returning ${ENDPOINT_COLUMNS}`,
);


/** Adds an endpoint (at most MAX_ENDPOINTS per organisation, counted under a lock of the organisation's endpoints). */
export async function createEndpoint(
  em: EntityManager, keyRing: KeyRing, orgId: string, input: EndpointInput, allowPrivate: boolean,
): Promise<EndpointJson & { secret: string }> {
  const url = await checkEndpointUrl(input.url, allowPrivate);
  const secret = newSecret();
  return em.transactional(async (tx) => {
    await lockEndpoints.run(tx, { orgId });
    const row = await insertEndpoint.first(tx, {
      orgId, url, events: JSON.stringify(input.events ?? []), description: input.description ?? '', secret: sealSecret(keyRing, secret), max: MAX_ENDPOINTS,
    });
    if (!row) throw new ConflictError(`an organisation has at most ${MAX_ENDPOINTS} webhook endpoints`);
    return { ...row, secret };
  });
}

const patchEndpoint = statement<
  EndpointJson,
  { url: string | null; events: string | null; description: string | null; enabled: boolean | null; enabling: boolean; endpointId: string; orgId: string }
>(
  ENDPOINT_JSON,
  (p) => sql`update webhook_endpoint set url = coalesce(${p.url}, url), events = coalesce(${p.events}::jsonb, events),
       description = coalesce(${p.description}, description), enabled = coalesce(${p.enabled}, enabled),
       disabled_reason = case when ${p.enabling} then null else disabled_reason end,
       failing_since = case when ${p.enabling} then null else failing_since end
     where id = ${p.endpointId} and organisation_id = ${p.orgId} returning ${ENDPOINT_COLUMNS}`,
);

/** Changes what is given; enabling clears the reason it was disabled and its failing streak. */
export async function updateEndpoint(em: EntityManager, orgId: string, endpointId: string, patch: EndpointPatch, allowPrivate: boolean): Promise<EndpointJson> {
  await getEndpoint(em, orgId, endpointId);
  const url = patch.url === undefined ? null : await checkEndpointUrl(patch.url, allowPrivate);
  const row = await patchEndpoint.first(em, {
    url, events: patch.events === undefined ? null : JSON.stringify(patch.events), description: patch.description ?? null, enabled: patch.enabled ?? null,
    enabling: patch.enabled === true, endpointId, orgId,
  });
  if (!row) throw new NotFoundError('webhook endpoint not found');
  return row;
}

const removeEndpoint = statement<{ id: string }, { endpointId: string; orgId: string }>(
  { id: true }, (p) => sql`delete from webhook_endpoint where id = ${p.endpointId} and organisation_id = ${p.orgId} returning id`,
);

export async function deleteEndpoint(em: EntityManager, orgId: string, endpointId: string): Promise<void> {
  const rows = isUuid(endpointId) ? await removeEndpoint.rows(em, { endpointId, orgId }) : [];
  if (rows.length === 0) throw new NotFoundError('webhook endpoint not found');
}

const rotate = statement<NoRows, { overlapMs: number; secret: string; endpointId: string; orgId: string }>(
  {},
  (p) => sql`update webhook_endpoint set previous_secret = secret, previous_secret_until = now() + ${p.overlapMs} * interval '1 millisecond', secret = ${p.secret}
     where id = ${p.endpointId} and organisation_id = ${p.orgId}`,
);

/** A new secret; the current one keeps signing beside it for ROTATION_OVERLAP_MS. */
export async function rotateSecret(em: EntityManager, keyRing: KeyRing, orgId: string, endpointId: string): Promise<{ secret: string }> {
  await getEndpoint(em, orgId, endpointId);
  const secret = newSecret();
  await rotate.run(em, { overlapMs: ROTATION_OVERLAP_MS, secret: sealSecret(keyRing, secret), endpointId, orgId });
  return { secret };
}

/** One stored (sealed or plain) secret of an endpoint: the row and column that hold it. */
export interface StoredEndpointSecret {
  id: string;
  column: 'secret' | 'previous_secret';
  stored: string;
}

const unsealedRead = statement<StoredEndpointSecret, { sealedLike: string }>(
  { id: true, column: true, stored: true },
  (p) => sql`select id, 'secret' as column, secret as stored from webhook_endpoint where secret not like ${p.sealedLike}
     union all select id, 'previous_secret', previous_secret from webhook_endpoint where previous_secret not like ${p.sealedLike}`,
);

/** The endpoints' secrets that do not match `sealedLike` (a LIKE pattern of sealed values). */
export function endpointSecretsNotLike(em: EntityManager, sealedLike: string): Promise<StoredEndpointSecret[]> {
  return unsealedRead.rows(em, { sealedLike });
}

const secretReseal = statement<NoRows, { value: string; id: string; stored: string }>(
  {},
  (p) => sql`update webhook_endpoint set secret = ${p.value} where id = ${p.id} and secret = ${p.stored}`,
);
const previousSecretReseal = statement<NoRows, { value: string; id: string; stored: string }>(
  {},
  (p) => sql`update webhook_endpoint set previous_secret = ${p.value} where id = ${p.id} and previous_secret = ${p.stored}`,
);

/**
 * Replaces one stored secret with `value` if it is still what was read (a rotation of the endpoint's
 * secret in between moves it); how many rows changed (0 or 1).
 */
export function replaceEndpointSecret(em: EntityManager, secret: StoredEndpointSecret, value: string): Promise<number> {
  return (secret.column === 'secret' ? secretReseal : previousSecretReseal).run(em, { value, id: secret.id, stored: secret.stored });
}

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

interface EventRow {
  id: string;
  organisation_id: string;
  type: EventType;
  subject_id: string;
  subject_row: unknown;
  timestamp: string;
  data: unknown;
}

// The recorded row is needed only until `data` is kept.
const EVENT_COLUMNS = sql`id, organisation_id, type, subject_id, case when data is null then subject_row end as subject_row,
  ${isoUtc('created_at')} as timestamp, data`;
const EVENT_ROW = { id: true, organisation_id: true, type: true, subject_id: true, subject_row: true, timestamp: true, data: true } as const;

const eventById = statement<EventRow, { eventId: string; orgId: string }>(
  EVENT_ROW, (p) => sql`select ${EVENT_COLUMNS} from outbound_event where id = ${p.eventId} and organisation_id = ${p.orgId}`,
);

/** Keeps each event's rendered `data` unless another reader kept it first; answers what is kept. */
const keepData = statement<{ id: string; data: unknown }, { rendered: string }>(
  { id: true, data: true },
  (p) => sql`update outbound_event e set data = coalesce(e.data, r.data)
       from jsonb_to_recordset(${p.rendered}::jsonb) as r(id text, data jsonb) where e.id = r.id returning e.id, e.data`,
);

/**
 * The events' `data`: kept ones as they are; the others rendered as the REST API shows their
 * subjects (a purchase as it was at the event, the others as they are: they do not change) and
 * kept (the first writer wins), so every attempt and every reader of an event sees the same body.
 * A subject gone since (deleted with its organisation's data) leaves `{id}`.
 */
async function withData(em: EntityManager, orgId: string, events: EventRow[]): Promise<EventJson[]> {
  const missing = events.filter((e) => e.data === null);
  if (missing.length > 0) {
    const rendered = new Map<string, unknown>();
    const purchases = missing.filter((e) => e.subject_row !== null && e.subject_row !== undefined);
    (await purchasesAsRecorded(em, orgId, purchases.map((e) => e.subject_row))).forEach((p, i) => rendered.set(purchases[i].id, p));
    const bySubject = new Map<string, unknown>();
    const idsOf = (type: EventType) => missing.filter((e) => e.type === type).map((e) => e.subject_id);
    for (const { id, ...d } of await completedDownloads(em, orgId, idsOf('download.completed'))) bySubject.set(id, d);
    for (const d of await deliveriesByIds(em, orgId, idsOf('delivery.failed'))) bySubject.set(d.id, d);
    const kept = await keepData.rows(em, {
      rendered: JSON.stringify(missing.map((e) => ({ id: e.id, data: rendered.get(e.id) ?? bySubject.get(e.subject_id) ?? { id: e.subject_id } }))),
    });
    const byId = new Map(kept.map((k) => [k.id, k.data]));
    for (const e of missing) e.data = byId.get(e.id) ?? null;
  }
  return events.map((e) => ({ id: e.id, type: e.type, timestamp: e.timestamp, data: e.data }));
}

const eventsInOrder = statement<EventRow, { orgId: string; after: string | null; type: EventType | null; limit: number }>(
  EVENT_ROW,
  (p) => sql`select ${EVENT_COLUMNS} from outbound_event
     where organisation_id = ${p.orgId} and transaction_id < pg_snapshot_xmin(pg_current_snapshot())
       and (${p.after}::text is null
         or (transaction_id, id) > (select transaction_id, id from outbound_event where organisation_id = ${p.orgId} and id = ${p.after})
         or (id > ${p.after} and not exists (select 1 from outbound_event where organisation_id = ${p.orgId} and id = ${p.after})))
       and (${p.type}::text is null or type = ${p.type})
     order by transaction_id, id limit ${p.limit}`,
);

export interface EventQuery {
  after?: string;
  limit: number;
  type?: EventType;
}

/**
 * The organisation's events in the order their transactions began, from after `after`. Only events
 * of transactions older than every transaction still running are listed: a transaction that began
 * earlier can commit later, and its events would otherwise appear behind a reader's `after` and be
 * passed over for good. An `after` that has since expired marks its place by its id (ids sort by
 * time; lower-case hex after one prefix, so every collation orders them as bytes do).
 */
export async function listEvents(em: EntityManager, orgId: string, query: EventQuery): Promise<EventJson[]> {
  if (query.after !== undefined && !EVENT_ID_RE.test(query.after)) throw new ValidationError('after: not an event id (evt_…)');
  const after = query.after ?? null;
  const rows = await eventsInOrder.rows(em, { orgId, after, type: query.type ?? null, limit: query.limit });
  return withData(em, orgId, rows);
}

async function eventOf(em: EntityManager, orgId: string, eventId: string): Promise<EventRow> {
  const row = EVENT_ID_RE.test(eventId) ? await eventById.first(em, { eventId, orgId }) : undefined;
  if (!row) throw new NotFoundError('event not found');
  return row;
}

const deliveriesOfEvent = statement<{ endpointId: string; state: (typeof DELIVERY_STATES)[number]; attempts: number }, { eventId: string }>(
  { endpointId: true, state: true, attempts: true },
  (p) => sql`select endpoint_id as "endpointId", state, attempts from outbound_delivery where event_id = ${p.eventId} order by endpoint_id`,
);

/** One event with its delivery to each endpoint. */
export async function getEvent(em: EntityManager, orgId: string, eventId: string): Promise<z.infer<typeof EventDetailJsonSchema>> {
  const [event] = await withData(em, orgId, [await eventOf(em, orgId, eventId)]);
  const deliveries = await deliveriesOfEvent.rows(em, { eventId });
  return { ...event, deliveries };
}

const redeliver = statement<{ id: string }, { eventId: string; orgId: string; endpointId: string | null; type: EventType }>(
  { id: true },
  (p) => sql`insert into outbound_delivery (event_id, endpoint_id, state, attempts, updated_at)
       select ${p.eventId}, id, 'pending', 0, now() from webhook_endpoint
       where organisation_id = ${p.orgId} and enabled
         and (${p.endpointId}::uuid is null and (events = '[]'::jsonb or events @> jsonb_build_array(${p.type}::text)) or id = ${p.endpointId}::uuid)
       on conflict (event_id, endpoint_id) do update set state = 'pending', updated_at = now()
       returning endpoint_id as id`,
);

/**
 * One more delivery of the event (same `webhook-id`) to that endpoint, or to every enabled endpoint
 * subscribed to its type: each delivery pending again and its run started through the outbox (a
 * run still open is told instead, and makes one more attempt at once).
 */
export async function redeliverEvent(em: EntityManager, orgId: string, eventId: string, endpointId: string | undefined): Promise<void> {
  const event = await eventOf(em, orgId, eventId);
  if (endpointId !== undefined) {
    const endpoint = await getEndpoint(em, orgId, endpointId);
    if (!endpoint.enabled) throw new ConflictError('this endpoint is disabled: enable it first');
  }
  await em.transactional(async (tx) => {
    const targets = await redeliver.rows(tx, { eventId, orgId, endpointId: endpointId ?? null, type: event.type });
    await enqueueDispatches(tx, targets.map((t): NewDispatch => {
      const payload = { eventId, endpointId: t.id, redelivery: true } as const;
      return { kind: 'deliver-event', orgId, workflowId: outboundDeliveryWorkflowId(payload), payload };
    }));
  });
}

// ---------------------------------------------------------------------------------------------
// Attempts
// ---------------------------------------------------------------------------------------------

const attemptPage = (where: Sql, limit: Parameters<{ limit: number }>['limit']) => sql`select id, event_id as "eventId", type, attempt,
       ${isoUtc('at')} as at, status, error, duration_ms as "durationMs", response_excerpt as "responseExcerpt"
     from outbound_attempt where ${where}
     order by at desc, id desc limit ${limit}`;
const ATTEMPT_JSON = {
  id: true, eventId: true, type: true, attempt: true, at: true, status: true, error: true, durationMs: true, responseExcerpt: true,
} as const;

const firstAttempts = statement<AttemptJson, { endpointId: string; limit: number }>(
  ATTEMPT_JSON, (p) => attemptPage(sql`endpoint_id = ${p.endpointId}`, p.limit),
);

const attemptsAfter = statement<AttemptJson, { endpointId: string; after: string; limit: number }>(
  ATTEMPT_JSON,
  (p) => attemptPage(
    sql`endpoint_id = ${p.endpointId} and (at, id) < (select at, id from outbound_attempt where id = ${p.after} and endpoint_id = ${p.endpointId})`, p.limit,
  ),
);

/** The endpoint's attempts, newest first; `after` is the id of the last attempt of the previous page. */
export async function listAttempts(em: EntityManager, orgId: string, endpointId: string, page: { after?: string; limit: number }): Promise<AttemptJson[]> {
  await getEndpoint(em, orgId, endpointId);
  if (page.after !== undefined && !isUuid(page.after)) throw new NotFoundError('after: no attempt with that id');
  return page.after === undefined
    ? firstAttempts.rows(em, { endpointId, limit: page.limit })
    : attemptsAfter.rows(em, { endpointId, after: page.after, limit: page.limit });
}

const insertAttempt = statement<
  NoRows,
  { endpointId: string; eventId: string; type: SentEventType; attempt: number; status: number | null; error: string | null; durationMs: number; excerpt: string }
>(
  {},
  (p) => sql`insert into outbound_attempt (id, endpoint_id, event_id, type, attempt, at, status, error, duration_ms, response_excerpt)
     values (gen_random_uuid(), ${p.endpointId}, ${p.eventId}, ${p.type}, ${p.attempt}, now(), ${p.status}, ${p.error}, ${p.durationMs}, ${p.excerpt})`,
);

async function logAttempt(em: EntityManager, endpointId: string, eventId: string, type: SentEventType, attempt: number, result: AttemptResult): Promise<void> {
  await insertAttempt.run(em, {
    endpointId, eventId, type, attempt, status: result.status, error: result.error, durationMs: result.durationMs,
    excerpt: result.responseExcerpt.replace(/\0/g, ''),
  });
}

// ---------------------------------------------------------------------------------------------
// Sending (the delivery activity and the test ping)
// ---------------------------------------------------------------------------------------------

interface EndpointSecrets {
  url: string;
  enabled: boolean;
  secret: string;
  previous_secret: string | null;
  previous_valid: boolean;
}

/** The secrets that sign now: the current one, and the previous one during a rotation's overlap. */
function signingSecrets(keyRing: KeyRing, row: EndpointSecrets): string[] {
  return [row.secret, ...(row.previous_valid && row.previous_secret ? [row.previous_secret] : [])].map((s) => openSecret(keyRing, s));
}

const ENDPOINT_SECRETS = sql`url, enabled, secret, previous_secret, coalesce(previous_secret_until > now(), false) as previous_valid`;
const ENDPOINT_SECRETS_ROW = { url: true, enabled: true, secret: true, previous_secret: true, previous_valid: true } as const;

const endpointSecrets = statement<EndpointSecrets, { endpointId: string }>(
  ENDPOINT_SECRETS_ROW, (p) => sql`select ${ENDPOINT_SECRETS} from webhook_endpoint where id = ${p.endpointId}`,
);

const endpointToSend = statement<EndpointSecrets & { organisation_id: string; disabled_reason: string | null; failing_since: string | null }, { endpointId: string }>(
  { ...ENDPOINT_SECRETS_ROW, organisation_id: true, disabled_reason: true, failing_since: true },
  (p) => sql`select organisation_id, disabled_reason, ${isoUtc('failing_since')} as failing_since, ${ENDPOINT_SECRETS}
       from webhook_endpoint where id = ${p.endpointId}`,
);

const failPending = statement<NoRows, { eventId: string; endpointId: string }>(
  {},
  (p) => sql`update outbound_delivery set state = 'failed', updated_at = now() where event_id = ${p.eventId} and endpoint_id = ${p.endpointId} and state = 'pending'`,
);

/**
 * The endpoint's row, locked first by an attempt's record: deleting the endpoint locks it before its
 * deliveries and attempts (the cascade), so taking the delivery's row first deadlocked with it.
 */
const lockEndpoint = statement<{ id: string }, { endpointId: string }>(
  { id: true }, (p) => sql`select id from webhook_endpoint where id = ${p.endpointId} for no key update`,
);

const countAttempt = statement<{ attempts: number }, { delivered: boolean; failed: boolean; eventId: string; endpointId: string }>(
  { attempts: true },
  (p) => sql`update outbound_delivery set attempts = attempts + 1, updated_at = now(),
         state = case when ${p.delivered} then 'delivered' when ${p.failed} then 'failed' else state end
       where event_id = ${p.eventId} and endpoint_id = ${p.endpointId} returning attempts`,
);

const endFailingStreak = statement<NoRows, { endpointId: string }>(
  {}, (p) => sql`update webhook_endpoint set failing_since = null where id = ${p.endpointId} and failing_since is not null`,
);

const extendFailingStreak = statement<{ disabled_now: boolean; since: string; reason: string | null }, { endpointId: string; gone: boolean; disableAfterMs: number }>(
  { disabled_now: true, since: true, reason: true },
  (p) => sql`with before as (select enabled from webhook_endpoint where id = ${p.endpointId} for no key update)
       update webhook_endpoint e set failing_since = coalesce(e.failing_since, now()),
         enabled = e.enabled and not (${p.gone} or coalesce(e.failing_since, now()) <= now() - ${p.disableAfterMs} * interval '1 millisecond'),
         disabled_reason = case
           when not e.enabled then e.disabled_reason
           when ${p.gone} then 'the endpoint answered 410 Gone'
           when coalesce(e.failing_since, now()) <= now() - ${p.disableAfterMs} * interval '1 millisecond' then 'every attempt failed since ' || ${isoUtc('coalesce(e.failing_since, now())')}
           else null end
       from before where e.id = ${p.endpointId}
       returning before.enabled and not e.enabled as disabled_now, ${isoUtc('e.failing_since')} as since, e.disabled_reason as reason`,
);

/** The body of a request: what GET /api/events shows of the event. */
export function eventBody(event: { id: string; type: SentEventType; timestamp: string; data: unknown }): string {
  return JSON.stringify({ id: event.id, type: event.type, timestamp: event.timestamp, data: event.data });
}

export interface DeliverySettings {
  allowPrivate: boolean;
  disableAfterMs: number;
}

/** Who to tell that deliveries disabled an endpoint, and why: one email per failing streak (`since`). */
export interface DisabledNotice {
  orgId: string;
  url: string;
  reason: string;
  since: string;
}

/** An attempt's outcome, and when deliveries have disabled the endpoint, the organisation to tell. */
export interface SentAttempt {
  outcome: AttemptOutcome;
  result?: AttemptResult;
  disabled?: DisabledNotice;
}

/**
 * The notice owed for an endpoint that deliveries disabled (410, or failing too long): given on
 * every attempt that finds it so, not only by the one that disabled it, so that an email lost with
 * that attempt's activity (a refusing relay, a crash after the commit) is sent by its retry.
 * Staff disabling an endpoint by hand leaves no reason: no notice.
 */
function disabledNotice(endpoint: { organisation_id: string; url: string }, reason: string | null, since: string | null): DisabledNotice | undefined {
  return reason !== null && since !== null ? { orgId: endpoint.organisation_id, url: endpoint.url, reason, since } : undefined;
}

/**
 * One attempt of the event to the endpoint: sent unless the endpoint is disabled or gone, logged,
 * and the delivery and the endpoint's failing streak updated. `last`: no retry follows a failure
 * (the delivery is then `failed`).
 */
export async function attemptDelivery(
  em: EntityManager, keyRing: KeyRing, settings: DeliverySettings, target: { eventId: string; endpointId: string; last: boolean },
): Promise<SentAttempt> {
  const endpoint = await endpointToSend.first(em, { endpointId: target.endpointId });
  const row = endpoint ? await eventById.first(em, { eventId: target.eventId, orgId: endpoint.organisation_id }) : undefined;
  if (!endpoint || !row) return { outcome: { kind: 'disabled' } };
  if (!endpoint.enabled) {
    await failPending.run(em, { eventId: target.eventId, endpointId: target.endpointId });
    return { outcome: { kind: 'disabled' }, disabled: disabledNotice(endpoint, endpoint.disabled_reason, endpoint.failing_since) };
  }
  const [event] = await withData(em, endpoint.organisation_id, [row]);
  const result = await sendWebhook({
    url: endpoint.url, webhookId: event.id, body: eventBody(event), secrets: signingSecrets(keyRing, endpoint), allowPrivate: settings.allowPrivate,
  });
  const delivered = result.error === null;
  const gone = result.status === 410;
  return em.transactional(async (tx): Promise<SentAttempt> => {
    // Deleted while the request was out: nothing to record, and nothing more to send.
    if (!(await lockEndpoint.first(tx, { endpointId: target.endpointId }))) return { outcome: { kind: 'disabled' }, result };
    const delivery = await countAttempt.first(tx, { delivered, failed: gone || target.last, eventId: target.eventId, endpointId: target.endpointId });
    await logAttempt(tx, target.endpointId, event.id, event.type, delivery?.attempts ?? 1, result);
    if (delivered) {
      await endFailingStreak.run(tx, { endpointId: target.endpointId });
      return { outcome: { kind: 'delivered' }, result };
    }
    // 410 disables at once; otherwise the endpoint goes when its failing streak reaches OUTBOUND_DISABLE_AFTER.
    const streak = await extendFailingStreak.first(tx, { endpointId: target.endpointId, gone, disableAfterMs: settings.disableAfterMs });
    if (!streak?.disabled_now) return { outcome: gone ? { kind: 'gone' } : { kind: 'failed' }, result };
    // Disabled by this attempt. A 410 has failed the delivery already; one that the streak's length
    // disabled ends now too, not after the next retry's wait.
    if (!gone) await failPending.run(tx, { eventId: target.eventId, endpointId: target.endpointId });
    return { outcome: gone ? { kind: 'gone' } : { kind: 'disabled' }, result, disabled: disabledNotice(endpoint, streak.reason, streak.since) };
  });
}

/** "Send test": a `ping` to the endpoint now, logged with its attempts (pings are not kept as events). */
export async function sendTestPing(
  em: EntityManager, keyRing: KeyRing, orgId: string, endpointId: string, allowPrivate: boolean,
): Promise<{ status: number | null; durationMs: number; error: string | null }> {
  await getEndpoint(em, orgId, endpointId);
  const endpoint = (await endpointSecrets.first(em, { endpointId }))!;
  const id = pingEventId();
  const body = eventBody({ id, type: 'ping', timestamp: new Date().toISOString(), data: { endpointId } });
  const result = await sendWebhook({ url: endpoint.url, webhookId: id, body, secrets: signingSecrets(keyRing, endpoint), allowPrivate });
  await logAttempt(em, endpointId, id, 'ping', 1, result);
  return { status: result.status, durationMs: result.durationMs, error: result.error };
}

/** The owners' and admins' addresses, for the email that an endpoint was disabled. */
export async function staffEmails(em: EntityManager, orgId: string): Promise<{ orgName: string; emails: string[] }> {
  const rows = await organisationStaffEmails(em, orgId);
  return { orgName: rows[0]?.org_name ?? '', emails: rows.flatMap((r) => (r.email ? [r.email] : [])) };
}

// ---------------------------------------------------------------------------------------------
// Retention and gauges
// ---------------------------------------------------------------------------------------------

const pruneAttempts = statement<NoRows, { cutoff: Date }>({}, (p) => sql`delete from outbound_attempt where at < ${p.cutoff}`);

const pruneEventRows = statement<{ id: string }, { cutoff: Date }>(
  { id: true }, (p) => sql`delete from outbound_event where created_at < ${p.cutoff} returning id`,
);

/** Events (with their deliveries) and attempts older than EVENT_RETENTION; returns how many events went. */
export async function pruneEvents(em: EntityManager, now: Date, retentionMs: number): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionMs);
  await pruneAttempts.run(em, { cutoff });
  const gone = await pruneEventRows.rows(em, { cutoff });
  return gone.length;
}

const gauges = statement<{ waiting: string; disabled: string }>(
  { waiting: true, disabled: true },
  () => sql`select (select count(*) from outbound_delivery where state = 'pending') as waiting,
       (select count(*) from webhook_endpoint where not enabled) as disabled`,
);

/** For /metrics: deliveries not yet delivered or failed, and endpoints disabled. */
export async function outboundGauges(em: EntityManager): Promise<{ deliveriesWaiting: number; endpointsDisabled: number }> {
  const row = (await gauges.first(em, {}))!;
  return { deliveriesWaiting: Number(row.waiting), endpointsDisabled: Number(row.disabled) };
}
