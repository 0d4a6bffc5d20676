/**
 * Outbound events (decisions §13): the one module that reads and writes their tables
 * (`webhook_endpoint`, `outbound_event`, `outbound_delivery`, `outbound_attempt`). Events themselves
 * are written by the triggers of the outbound-events migration, in the transaction of their change;
 * everything else is here: endpoints and their sealed secrets, the events API, each delivery's
 * state and attempts, redelivery, the test ping, retention and the gauges.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { isoUtc, preparedRows } from '../db/legacy-sql';
import { ConflictError, NotFoundError, ValidationError } from '../domain/errors';
import { boundedText } from '../domain/field-limits';
import {
  DELIVERY_STATES, EVENT_ID_RE, EVENT_TYPES, MAX_ENDPOINTS, outboundDeliveryWorkflowId, ROTATION_OVERLAP_MS,
  type AttemptOutcome, type EventType, type SentEventType,
} from '../domain/outbound-events';
import { isUuid } from '../domain/uuid';
import { PurchaseJsonSchema, purchasesAsRecorded } from '../purchases/purchase-store';
import { completedDownloads } from '../purchases/link-store';
import type { KeyRing } from '../security/key-ring';
import { openSecret, sealSecret } from '../security/sealed-secrets';
import { deliveriesByIds, DeliveryJsonSchema } from '../services/webhook-log';
import { enqueueDispatches } from '../services/workflow-outbox';
import { checkEndpointUrl } from './addresses';
import { sendWebhook, type AttemptResult } from './sender';

const URL_LIMIT = 2000;
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
  'license.activated': z.object({}).passthrough().describe('license keys (decisions §14)'),
  'license.deactivated': z.object({}).passthrough().describe('license keys (decisions §14)'),
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

const ENDPOINT_COLUMNS = `id, url, events, description, enabled, disabled_reason as "disabledReason", ${isoUtc('created_at')} as "createdAt"`;

/** One endpoint of the organisation: another organisation's id, or no id at all, is 404. */
export async function getEndpoint(em: EntityManager, orgId: string, endpointId: string): Promise<EndpointJson> {
  const [row] = isUuid(endpointId)
    ? await em.execute<EndpointJson[]>(`select ${ENDPOINT_COLUMNS} from webhook_endpoint where id = ? and organisation_id = ?`, [endpointId, orgId])
    : [];
  if (!row) throw new NotFoundError('webhook endpoint not found');
  return row;
}

export async function listEndpoints(em: EntityManager, orgId: string): Promise<EndpointJson[]> {
  return em.execute<EndpointJson[]>(`select ${ENDPOINT_COLUMNS} from webhook_endpoint where organisation_id = ? order by created_at, id`, [orgId]);
}


/** Adds an endpoint (at most MAX_ENDPOINTS per organisation, counted under a lock of the organisation's endpoints). */
export async function createEndpoint(
  em: EntityManager, keyRing: KeyRing, orgId: string, input: EndpointInput, allowPrivate: boolean,
): Promise<EndpointJson & { secret: string }> {
  const url = await checkEndpointUrl(input.url, allowPrivate);
  const secret = newSecret();
  return em.transactional(async (tx) => {
    await tx.execute(`select pg_advisory_xact_lock(hashtext('webhook_endpoint:' || ?::text))`, [orgId]);
    const [row] = await tx.execute<EndpointJson[]>(
      `insert into webhook_endpoint (id, organisation_id, url, events, description, enabled, secret, created_at)
       select gen_random_uuid(), ?, ?, ?, ?, true, ?, now()
       where (select count(*) from webhook_endpoint where organisation_id = ?) < ?
       returning ${ENDPOINT_COLUMNS}`,
      [orgId, url, JSON.stringify(input.events ?? []), input.description ?? '', sealSecret(keyRing, secret), orgId, MAX_ENDPOINTS],
    );
    if (!row) throw new ConflictError(`an organisation has at most ${MAX_ENDPOINTS} webhook endpoints`);
    return { ...row, secret };
  });
}

/** Changes what is given; enabling clears the reason it was disabled and its failing streak. */
export async function updateEndpoint(em: EntityManager, orgId: string, endpointId: string, patch: EndpointPatch, allowPrivate: boolean): Promise<EndpointJson> {
  await getEndpoint(em, orgId, endpointId);
  const url = patch.url === undefined ? null : await checkEndpointUrl(patch.url, allowPrivate);
  const [row] = await em.execute<EndpointJson[]>(
    `update webhook_endpoint set url = coalesce(?, url), events = coalesce(?::jsonb, events), description = coalesce(?, description),
       enabled = coalesce(?, enabled),
       disabled_reason = case when ? then null else disabled_reason end,
       failing_since = case when ? then null else failing_since end
     where id = ? and organisation_id = ? returning ${ENDPOINT_COLUMNS}`,
    [
      url, patch.events === undefined ? null : JSON.stringify(patch.events), patch.description ?? null, patch.enabled ?? null,
      patch.enabled === true, patch.enabled === true, endpointId, orgId,
    ],
  );
  if (!row) throw new NotFoundError('webhook endpoint not found');
  return row;
}

export async function deleteEndpoint(em: EntityManager, orgId: string, endpointId: string): Promise<void> {
  const rows = isUuid(endpointId)
    ? await em.execute<Array<{ id: string }>>('delete from webhook_endpoint where id = ? and organisation_id = ? returning id', [endpointId, orgId])
    : [];
  if (rows.length === 0) throw new NotFoundError('webhook endpoint not found');
}

/** A new secret; the current one keeps signing beside it for ROTATION_OVERLAP_MS. */
export async function rotateSecret(em: EntityManager, keyRing: KeyRing, orgId: string, endpointId: string): Promise<{ secret: string }> {
  await getEndpoint(em, orgId, endpointId);
  const secret = newSecret();
  await em.execute(
    `update webhook_endpoint set previous_secret = secret, previous_secret_until = now() + ? * interval '1 millisecond', secret = ?
     where id = ? and organisation_id = ?`,
    [ROTATION_OVERLAP_MS, sealSecret(keyRing, secret), endpointId, orgId],
  );
  return { secret };
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
const EVENT_COLUMNS = `id, organisation_id, type, subject_id, case when data is null then subject_row end as subject_row,
  ${isoUtc('created_at')} as timestamp, data`;

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
    const kept = await em.execute<Array<{ id: string; data: unknown }>>(
      `update outbound_event e set data = coalesce(e.data, r.data)
       from jsonb_to_recordset(?::jsonb) as r(id text, data jsonb) where e.id = r.id returning e.id, e.data`,
      [JSON.stringify(missing.map((e) => ({ id: e.id, data: rendered.get(e.id) ?? bySubject.get(e.subject_id) ?? { id: e.subject_id } })))],
    );
    const byId = new Map(kept.map((k) => [k.id, k.data]));
    for (const e of missing) e.data = byId.get(e.id) ?? null;
  }
  return events.map((e) => ({ id: e.id, type: e.type, timestamp: e.timestamp, data: e.data }));
}

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
  const rows = await preparedRows<EventRow>(
    em,
    `select ${EVENT_COLUMNS} from outbound_event
     where organisation_id = ? and transaction_id < pg_snapshot_xmin(pg_current_snapshot())
       and (?::text is null
         or (transaction_id, id) > (select transaction_id, id from outbound_event where organisation_id = ? and id = ?)
         or (id > ? and not exists (select 1 from outbound_event where organisation_id = ? and id = ?)))
       and (?::text is null or type = ?)
     order by transaction_id, id limit ?`,
    [orgId, after, orgId, after, after, orgId, after, query.type ?? null, query.type ?? null, query.limit],
  );
  return withData(em, orgId, rows);
}

async function eventOf(em: EntityManager, orgId: string, eventId: string): Promise<EventRow> {
  const [row] = EVENT_ID_RE.test(eventId)
    ? await em.execute<EventRow[]>(`select ${EVENT_COLUMNS} from outbound_event where id = ? and organisation_id = ?`, [eventId, orgId])
    : [];
  if (!row) throw new NotFoundError('event not found');
  return row;
}

/** One event with its delivery to each endpoint. */
export async function getEvent(em: EntityManager, orgId: string, eventId: string): Promise<z.infer<typeof EventDetailJsonSchema>> {
  const [event] = await withData(em, orgId, [await eventOf(em, orgId, eventId)]);
  const deliveries = await em.execute<Array<{ endpointId: string; state: (typeof DELIVERY_STATES)[number]; attempts: number }>>(
    `select endpoint_id as "endpointId", state, attempts from outbound_delivery where event_id = ? order by endpoint_id`,
    [eventId],
  );
  return { ...event, deliveries };
}

/**
 * One more delivery of the event (same `webhook-id`) to that endpoint, or to every enabled endpoint
 * subscribed to its type: each delivery pending again and its run started through the outbox (a
 * run still retrying is joined instead).
 */
export async function redeliverEvent(em: EntityManager, orgId: string, eventId: string, endpointId: string | undefined): Promise<void> {
  const event = await eventOf(em, orgId, eventId);
  if (endpointId !== undefined) {
    const endpoint = await getEndpoint(em, orgId, endpointId);
    if (!endpoint.enabled) throw new ConflictError('this endpoint is disabled: enable it first');
  }
  await em.transactional(async (tx) => {
    const targets = await tx.execute<Array<{ id: string }>>(
      `insert into outbound_delivery (event_id, endpoint_id, state, attempts, updated_at)
       select ?, id, 'pending', 0, now() from webhook_endpoint
       where organisation_id = ? and enabled and (?::uuid is null and (events = '[]'::jsonb or events @> jsonb_build_array(?::text)) or id = ?::uuid)
       on conflict (event_id, endpoint_id) do update set state = 'pending', updated_at = now()
       returning endpoint_id as id`,
      [eventId, orgId, endpointId ?? null, event.type, endpointId ?? null],
    );
    await enqueueDispatches(tx, targets.map((t) => ({
      kind: 'deliver-event', orgId, workflowId: outboundDeliveryWorkflowId(eventId, t.id), payload: { eventId, endpointId: t.id },
    })));
  });
}

// ---------------------------------------------------------------------------------------------
// Attempts
// ---------------------------------------------------------------------------------------------

/** The endpoint's attempts, newest first; `after` is the id of the last attempt of the previous page. */
export async function listAttempts(em: EntityManager, orgId: string, endpointId: string, page: { after?: string; limit: number }): Promise<AttemptJson[]> {
  await getEndpoint(em, orgId, endpointId);
  if (page.after !== undefined && !isUuid(page.after)) throw new NotFoundError('after: no attempt with that id');
  return em.execute<AttemptJson[]>(
    `select id, event_id as "eventId", type, attempt, ${isoUtc('at')} as at, status, error, duration_ms as "durationMs",
       response_excerpt as "responseExcerpt"
     from outbound_attempt where endpoint_id = ?
       ${page.after === undefined ? '' : 'and (at, id) < (select at, id from outbound_attempt where id = ? and endpoint_id = ?)'}
     order by at desc, id desc limit ?`,
    page.after === undefined ? [endpointId, page.limit] : [endpointId, page.after, endpointId, page.limit],
  );
}

async function logAttempt(em: EntityManager, endpointId: string, eventId: string, type: SentEventType, attempt: number, result: AttemptResult): Promise<void> {
  await em.execute(
    `insert into outbound_attempt (id, endpoint_id, event_id, type, attempt, at, status, error, duration_ms, response_excerpt)
     values (gen_random_uuid(), ?, ?, ?, ?, now(), ?, ?, ?, ?)`,
    [endpointId, eventId, type, attempt, result.status, result.error, result.durationMs, result.responseExcerpt.replace(/\0/g, '')],
  );
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

const ENDPOINT_SECRETS = `url, enabled, secret, previous_secret, coalesce(previous_secret_until > now(), false) as previous_valid`;

/** The body of a request: what GET /api/events shows of the event. */
export function eventBody(event: { id: string; type: SentEventType; timestamp: string; data: unknown }): string {
  return JSON.stringify({ id: event.id, type: event.type, timestamp: event.timestamp, data: event.data });
}

export interface DeliverySettings {
  allowPrivate: boolean;
  disableAfterMs: number;
}

/** An attempt's outcome, and when it disabled the endpoint, the organisation to tell. */
export interface SentAttempt {
  outcome: AttemptOutcome;
  result?: AttemptResult;
  disabled?: { orgId: string; url: string; reason: string; since: string };
}

/**
 * One attempt of the event to the endpoint: sent unless the endpoint is disabled or gone, logged,
 * and the delivery and the endpoint's failing streak updated. `last`: no retry follows a failure
 * (the delivery is then `failed`).
 */
export async function attemptDelivery(
  em: EntityManager, keyRing: KeyRing, settings: DeliverySettings, target: { eventId: string; endpointId: string; last: boolean },
): Promise<SentAttempt> {
  const [endpoint] = await em.execute<Array<EndpointSecrets & { organisation_id: string }>>(
    `select organisation_id, ${ENDPOINT_SECRETS} from webhook_endpoint where id = ?`, [target.endpointId],
  );
  const [row] = endpoint
    ? await em.execute<EventRow[]>(`select ${EVENT_COLUMNS} from outbound_event where id = ? and organisation_id = ?`, [target.eventId, endpoint.organisation_id])
    : [];
  if (!endpoint || !row) return { outcome: { kind: 'disabled' } };
  if (!endpoint.enabled) {
    await em.execute(`update outbound_delivery set state = 'failed', updated_at = now() where event_id = ? and endpoint_id = ? and state = 'pending'`, [target.eventId, target.endpointId]);
    return { outcome: { kind: 'disabled' } };
  }
  const [event] = await withData(em, endpoint.organisation_id, [row]);
  const result = await sendWebhook({
    url: endpoint.url, webhookId: event.id, body: eventBody(event), secrets: signingSecrets(keyRing, endpoint), allowPrivate: settings.allowPrivate,
  });
  const delivered = result.error === null;
  const gone = result.status === 410;
  return em.transactional(async (tx) => {
    const [delivery] = await tx.execute<Array<{ attempts: number }>>(
      `update outbound_delivery set attempts = attempts + 1, updated_at = now(),
         state = case when ? then 'delivered' when ? then 'failed' else state end
       where event_id = ? and endpoint_id = ? returning attempts`,
      [delivered, gone || target.last, target.eventId, target.endpointId],
    );
    await logAttempt(tx, target.endpointId, event.id, event.type, delivery?.attempts ?? 1, result);
    if (delivered) {
      await tx.execute('update webhook_endpoint set failing_since = null where id = ? and failing_since is not null', [target.endpointId]);
      return { outcome: { kind: 'delivered' }, result };
    }
    // 410 disables at once; otherwise the endpoint goes when its failing streak reaches OUTBOUND_DISABLE_AFTER.
    const [streak] = await tx.execute<Array<{ disabled_now: boolean; since: string }>>(
      `with before as (select enabled from webhook_endpoint where id = ? for update)
       update webhook_endpoint e set failing_since = coalesce(e.failing_since, now()),
         enabled = e.enabled and not (? or coalesce(e.failing_since, now()) <= now() - ? * interval '1 millisecond'),
         disabled_reason = case
           when not e.enabled then e.disabled_reason
           when ? then 'the endpoint answered 410 Gone'
           when coalesce(e.failing_since, now()) <= now() - ? * interval '1 millisecond' then 'every attempt failed since ' || ${isoUtc('coalesce(e.failing_since, now())')}
           else null end
       from before where e.id = ?
       returning before.enabled and not e.enabled as disabled_now, ${isoUtc('e.failing_since')} as since`,
      [target.endpointId, gone, settings.disableAfterMs, gone, settings.disableAfterMs, target.endpointId],
    );
    const outcome: AttemptOutcome = gone ? { kind: 'gone' } : { kind: 'failed' };
    if (!streak?.disabled_now) return { outcome, result };
    return {
      outcome,
      result,
      disabled: { orgId: endpoint.organisation_id, url: endpoint.url, reason: gone ? 'it answered 410 Gone' : `every attempt has failed since ${streak.since}`, since: streak.since },
    };
  });
}

/** "Send test": a `ping` to the endpoint now, logged with its attempts (pings are not kept as events). */
export async function sendTestPing(
  em: EntityManager, keyRing: KeyRing, orgId: string, endpointId: string, allowPrivate: boolean,
): Promise<{ status: number | null; durationMs: number; error: string | null }> {
  await getEndpoint(em, orgId, endpointId);
  const [endpoint] = await em.execute<EndpointSecrets[]>(`select ${ENDPOINT_SECRETS} from webhook_endpoint where id = ?`, [endpointId]);
  const id = pingEventId();
  const body = eventBody({ id, type: 'ping', timestamp: new Date().toISOString(), data: { endpointId } });
  const result = await sendWebhook({ url: endpoint.url, webhookId: id, body, secrets: signingSecrets(keyRing, endpoint), allowPrivate });
  await logAttempt(em, endpointId, id, 'ping', 1, result);
  return { status: result.status, durationMs: result.durationMs, error: result.error };
}

/** The owners' and admins' addresses, for the email that an endpoint was disabled. */
export async function staffEmails(em: EntityManager, orgId: string): Promise<{ orgName: string; emails: string[] }> {
  const rows = await em.execute<Array<{ org_name: string; email: string | null }>>(
    `select o.name as org_name, u.email from organisation o left join app_user u on u.organisation_id = o.id and u.role in ('owner', 'admin')
     where o.id = ? order by u.email`,
    [orgId],
  );
  return { orgName: rows[0]?.org_name ?? '', emails: rows.flatMap((r) => (r.email ? [r.email] : [])) };
}

// ---------------------------------------------------------------------------------------------
// Retention and gauges
// ---------------------------------------------------------------------------------------------

/** Events (with their deliveries) and attempts older than EVENT_RETENTION; returns how many events went. */
export async function pruneEvents(em: EntityManager, now: Date, retentionMs: number): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionMs);
  await em.execute('delete from outbound_attempt where at < ?', [cutoff]);
  const gone = await em.execute<Array<{ id: string }>>('delete from outbound_event where created_at < ? returning id', [cutoff]);
  return gone.length;
}

/** For /metrics: deliveries not yet delivered or failed, and endpoints disabled. */
export async function outboundGauges(em: EntityManager): Promise<{ deliveriesWaiting: number; endpointsDisabled: number }> {
  const [row] = await em.execute<Array<{ waiting: string; disabled: string }>>(
    `select (select count(*) from outbound_delivery where state = 'pending') as waiting,
       (select count(*) from webhook_endpoint where not enabled) as disabled`,
  );
  return { deliveriesWaiting: Number(row.waiting), endpointsDisabled: Number(row.disabled) };
}
