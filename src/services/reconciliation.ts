/**
 * Missed-webhook reconciliation's settings (decisions §15): per integration, read-only credentials of
 * the platform's order API (sealed at rest, never returned), the API's origin, on or off, run now,
 * and what the last run found. The schedule follows the setting: created or updated when enabled,
 * deleted when disabled; saving the credentials again lifts a pause a refusal caused.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { reconciliationOf, saveReconciliation, type ReconciliationRow } from '../accounts/reconciliation-store';
import { boundedText, FIELD_LIMITS } from '../domain/field-limits';
import { ConflictError, NotFoundError, ValidationError } from '../domain/errors';
import { isPlatform, type Platform } from '../domain/platforms';
import { AddressRefusedError, checkEndpointUrl, checkLiteralHost } from '../events/addresses';
import { URL_LIMIT } from '../events/outbound-events';
import type { KeyRing } from '../security/key-ring';
import { openSecret, sealSecret } from '../security/sealed-secrets';
import type { ReconcileSchedules } from '../temporal/reconcile-schedules';
import type { OrderListClient } from '../webhooks/order-list';
import { NO_ORDER_API, ORDER_LIST_CLIENTS, orderListClientOf } from '../webhooks/order-lists';

const RECONCILABLE = ORDER_LIST_CLIENTS.map((c) => c.platform).join(', ');

export const ReconciliationInputSchema = z.object({
  enabled: z.boolean(),
  apiBaseUrl: boundedText(URL_LIMIT).optional()
    .describe('an origin only, `https://host[:port]` (the service adds the API path); default: the platform\'s public API (storefront-a: `https://{shopDomain}`; plugin-b has none: the shop\'s own site, required; payments-c: `https://api.stripe.com`; reseller-d: `https://api.fastspring.com`; cart-e: `https://api.gumroad.com`)'),
  shopDomain: boundedText(FIELD_LIMITS.name).optional().describe('storefront-a: the shop\'s domain, e.g. your-shop.myshopify.com'),
  accessToken: boundedText(FIELD_LIMITS.secret).optional().describe('storefront-a: an Admin API access token granted read_orders only; cart-e: an application access token granted view_sales only'),
  secretKey: boundedText(FIELD_LIMITS.secret).optional().describe('payments-c: a restricted key with Checkout Sessions: Read only'),
  consumerKey: boundedText(FIELD_LIMITS.secret).optional().describe('plugin-b: the consumer key (ck_…) of a REST API key with Read permission'),
  consumerSecret: boundedText(FIELD_LIMITS.secret).optional().describe('plugin-b: that key\'s consumer secret (cs_…)'),
  username: boundedText(FIELD_LIMITS.name).optional().describe('reseller-d: the store\'s API username (Integrations › API Credentials)'),
  password: boundedText(FIELD_LIMITS.secret).optional().describe('reseller-d: that API user\'s password'),
}).describe(`Read-only order-API credentials; available for: ${RECONCILABLE}. Absent credentials keep the stored ones.`);
export type ReconciliationInput = z.infer<typeof ReconciliationInputSchema>;

export const ReconcileResultSchema = z.object({
  pulled: z.number().int().describe('orders read from the platform'),
  recovered: z.number().int().describe('paid orders no webhook had brought: recorded and fulfilled'),
  alreadyKnown: z.number().int().describe('paid orders already received: nothing changed'),
  errors: z.number().int().describe('orders that could not be read, or pages the platform kept failing'),
});

export const ReconciliationJsonSchema = z.object({
  enabled: z.boolean(),
  state: z.enum(['active', 'paused', 'off']).describe('paused: the platform refused the credentials; save them again to resume'),
  pausedReason: z.string().nullable(),
  apiBaseUrl: z.string().nullable(),
  lastRunAt: z.string().nullable().describe('when the last run ended (ISO 8601, UTC)'),
  lastResult: ReconcileResultSchema.nullable(),
  nextRunAt: z.string().nullable().describe('when the schedule runs next (ISO 8601, UTC), or null when it does not'),
});
export type ReconciliationJson = z.infer<typeof ReconciliationJsonSchema>;

export interface ReconciliationDeps {
  keyRing: KeyRing;
  schedules: ReconcileSchedules;
  /** OUTBOUND_WEBHOOKS_ALLOW_PRIVATE: `http://` and non-public API origins are allowed (development, tests). */
  allowPrivate: boolean;
  now: Date;
}

/** The platform's order-list client, or the 404/400 that says why there is none. */
function clientFor(platformWord: string): { platform: Platform; client: OrderListClient } {
  if (!isPlatform(platformWord)) throw new NotFoundError('unknown platform');
  if (NO_ORDER_API.includes(platformWord)) throw new ValidationError(`${platformWord} has no order API`);
  const client = orderListClientOf(platformWord);
  if (!client) throw new ValidationError(`reconciliation is not available for ${platformWord} yet`);
  return { platform: platformWord, client };
}

/** An origin: `https://host[:port]`, nothing after it; the §13 address rules apply. */
async function checkOrigin(text: string, allowPrivate: boolean): Promise<string> {
  let checked: string;
  try {
    checked = await checkEndpointUrl(text, allowPrivate);
  } catch (error) {
    if (error instanceof ValidationError) throw new ValidationError(error.message.replace(/^url:/, 'apiBaseUrl:'));
    throw error;
  }
  const url = new URL(checked);
  if (url.pathname !== '/' || url.search !== '') throw new ValidationError('apiBaseUrl: an origin only (https://host[:port]), the service adds the API path');
  return url.origin;
}

/**
 * The origin when none is given: a stored origin the seller chose stays (new keys of the same shop
 * or account do not move it); one that was the platform's default follows the credentials
 * (storefront-a's shop domain); a platform with no default (plugin-b) keeps the stored one.
 */
function originKept(
  client: OrderListClient, stored: { origin: string; credentials: Record<string, string> } | undefined, credentials: Record<string, string>,
): string | null {
  if (stored && stored.origin !== client.defaultOrigin(stored.credentials)) return stored.origin;
  return client.defaultOrigin(credentials) ?? stored?.origin ?? null;
}

/**
 * A platform's own address that the credentials name (storefront-a's shop domain), refused when it
 * is a non-public IP, as an API address given would be; a name is looked up at each run's connection.
 */
function refuseNamedAddress(client: OrderListClient, credentials: Record<string, string>, origin: string): void {
  if (origin !== client.defaultOrigin(credentials)) return;
  // The credential the address comes from; none for a platform's fixed public API.
  const field = client.credentialFields.find((f) => client.defaultOrigin({ ...credentials, [f.field]: '' }) !== origin);
  if (!field) return;
  try {
    checkLiteralHost(new URL(origin));
  } catch (error) {
    if (!(error instanceof AddressRefusedError)) throw error;
    throw new ValidationError(`${field.field}: ${error.message}; only public addresses are allowed`);
  }
}

/** The stored credentials, opened (for the runs). */
export function openCredentials(keyRing: KeyRing, row: Pick<ReconciliationRow, 'credentials'>): Record<string, string> {
  return JSON.parse(openSecret(keyRing, row.credentials)) as Record<string, string>;
}

function stateOf(row: ReconciliationRow | undefined): ReconciliationJson['state'] {
  if (!row?.enabled) return 'off';
  return row.paused_at === null ? 'active' : 'paused';
}

export async function reconciliationSettings(
  em: EntityManager, deps: Pick<ReconciliationDeps, 'schedules' | 'now'>, orgId: string, platformWord: string,
): Promise<ReconciliationJson> {
  const { platform } = clientFor(platformWord);
  const row = await reconciliationOf(em, orgId, platform);
  const state = stateOf(row);
  return {
    enabled: row?.enabled ?? false,
    state,
    pausedReason: row?.paused_reason ?? null,
    apiBaseUrl: row?.api_base_url ?? null,
    lastRunAt: row?.last_run_at ?? null,
    lastResult: row?.last_result ?? null,
    nextRunAt: state === 'active' ? deps.schedules.nextRunAt(deps.now) : null,
  };
}

/**
 * Saves the setting and brings the schedule in line: enabled → created or updated and running (a
 * pause lifted), disabled → deleted. Credentials must be given when none are stored; each one given
 * replaces its stored value, the others are kept (a new token of the same shop, say).
 */
export async function configureReconciliation(
  em: EntityManager, deps: ReconciliationDeps, orgId: string, platformWord: string, input: ReconciliationInput,
): Promise<ReconciliationJson> {
  const { platform, client } = clientFor(platformWord);
  const stored = await reconciliationOf(em, orgId, platform);
  const storedCredentials = stored && openCredentials(deps.keyRing, stored);
  const { enabled, apiBaseUrl, ...fields } = input;
  const given = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
  const parsed = client.credentials.safeParse({ ...storedCredentials, ...given });
  if (!parsed.success) {
    throw new ValidationError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  }
  const credentials: Record<string, string> = parsed.data;
  const origin = apiBaseUrl !== undefined && apiBaseUrl.trim() !== ''
    ? await checkOrigin(apiBaseUrl.trim(), deps.allowPrivate)
    : originKept(client, stored && { origin: stored.api_base_url, credentials: storedCredentials! }, credentials);
  if (origin === null) throw new ValidationError(`apiBaseUrl is required for ${platform}`);
  if (!deps.allowPrivate) refuseNamedAddress(client, credentials, origin);
  await saveReconciliation(em, { orgId, platform, enabled, apiBaseUrl: origin, credentials: sealSecret(deps.keyRing, JSON.stringify(credentials)), now: deps.now });
  if (enabled) await deps.schedules.upsert(orgId, platform);
  else await deps.schedules.remove(orgId, platform);
  return reconciliationSettings(em, deps, orgId, platform);
}

/** Starts a run now: 409 when reconciliation is off or paused. */
export async function runReconciliationNow(em: EntityManager, deps: Pick<ReconciliationDeps, 'schedules'>, orgId: string, platformWord: string): Promise<void> {
  const { platform } = clientFor(platformWord);
  const state = stateOf(await reconciliationOf(em, orgId, platform));
  if (state === 'off') throw new ConflictError('reconciliation is off for this platform');
  if (state === 'paused') throw new ConflictError('reconciliation is paused: the platform refused the credentials; save them again');
  await deps.schedules.trigger(orgId, platform);
}
