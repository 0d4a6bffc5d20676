import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { configuredPlatforms, upsertIntegration } from '../accounts/integration-store';
import { healthOf, type HealthRow } from '../accounts/integration-health-store';
import { REFUSAL_REASONS } from '../domain/integration-health';
import { NotFoundError, ValidationError } from '../domain/errors';
import { isPlatform, PLATFORMS, type Platform } from '../domain/platforms';
import type { KeyRing } from '../security/key-ring';
import { sealSecret } from '../security/sealed-secrets';
import type { PlatformAdapter } from '../webhooks/adapter';
import { ADAPTERS, adapters, webhookPath } from '../webhooks/registry';
import { boundedText, FIELD_LIMITS } from '../domain/field-limits';

/** What Settings, Integrations shows of one platform: never a secret. */
export const IntegrationJsonSchema = z.object({
  platform: z.enum(PLATFORMS),
  configured: z.boolean(),
  webhookUrl: z.string(),
  note: z.string().optional().describe('what the seller must still do with the URL, where something is needed'),
});
export type IntegrationJson = z.infer<typeof IntegrationJsonSchema>;

const isoTime = (what: string) => z.string().nullable().describe(`${what} (ISO 8601, UTC), or null when there has been none`);

/** What the front door saw of a platform's deliveries lately (decisions §15). */
export const IntegrationHealthSchema = z.object({
  lastVerifiedAt: isoTime('when the last delivery with a good signature arrived'),
  lastRefusedAt: isoTime('when the last delivery was refused'),
  lastRefusalReason: z.enum(REFUSAL_REASONS).nullable().describe('why the last refused delivery was refused'),
  verified24h: z.number().int().describe('deliveries verified in the last 24 hours (hourly buckets: the current hour and the 23 before)'),
  refused24h: z.number().int().describe('deliveries refused in the last 24 hours (same buckets)'),
});
export type IntegrationHealthJson = z.infer<typeof IntegrationHealthSchema>;

/** An element of the integrations list: the platform's settings and its health. */
export const IntegrationListItemSchema = IntegrationJsonSchema.extend({ health: IntegrationHealthSchema });
export type IntegrationListItem = z.infer<typeof IntegrationListItemSchema>;

const NO_DELIVERIES: IntegrationHealthJson = { lastVerifiedAt: null, lastRefusedAt: null, lastRefusalReason: null, verified24h: 0, refused24h: 0 };

function healthJson(row: HealthRow): IntegrationHealthJson {
  return {
    lastVerifiedAt: row.last_verified_at,
    lastRefusedAt: row.last_refused_at,
    lastRefusalReason: row.last_refusal_reason,
    verified24h: row.verified,
    refused24h: row.refused,
  };
}

/** The shortest integration secret accepted. */
export const MIN_SECRET_LENGTH = 16;

/** The platforms whose adapters say so, for messages and the OpenAPI text. */
function platformsWhere(test: (adapter: PlatformAdapter) => boolean): string {
  return ADAPTERS.filter(test).map((a) => a.platform).join(', ');
}
const PRIVATE_KEY_PLATFORMS = platformsWhere((a) => a.secretField.field === 'privateKey');
const SHARED_ROUTE_PLATFORMS = platformsWhere((a) => a.routing.kind === 'shared');

/** PUT body: the adapter's secret field (`secret` accepted for `privateKey` too); shared routes also `accountId`. */
export const IntegrationInputSchema = z.object({
  secret: boundedText(FIELD_LIMITS.secret).optional().describe(`the signing or shared secret (every platform but ${PRIVATE_KEY_PLATFORMS})`),
  privateKey: boundedText(FIELD_LIMITS.secret).optional().describe(`${PRIVATE_KEY_PLATFORMS}: the notification private key`),
  accountId: boundedText(FIELD_LIMITS.accountId).optional().describe(`${SHARED_ROUTE_PLATFORMS}: the account id its events carry; absent: unchanged, empty: removed`),
});
export type IntegrationInput = z.infer<typeof IntegrationInputSchema>;

function integrationJson(baseUrl: string, orgId: string, platform: Platform, configured: boolean): IntegrationJson {
  const adapter = adapters[platform];
  const note = adapter.setupNote;
  return { platform, configured, webhookUrl: `${baseUrl}${webhookPath(adapter, orgId)}`, ...(note ? { note } : {}) };
}

/** Every platform, each configured or not, with its health as of `now`. */
export async function listIntegrations(em: EntityManager, orgId: string, baseUrl: string, now: Date): Promise<IntegrationListItem[]> {
  const configured = new Set(await configuredPlatforms(em, orgId));
  const health = new Map((await healthOf(em, orgId, now)).map((row) => [row.platform, healthJson(row)]));
  return ADAPTERS.map(({ platform }) => ({
    ...integrationJson(baseUrl, orgId, platform, configured.has(platform)),
    health: health.get(platform) ?? NO_DELIVERIES,
  }));
}

/**
 * Sets a platform's secret (upsert on organisation + platform). On a shared route the account id is
 * kept as given, whoever else registered it: the front door tries every organisation with that
 * account (the signature decides), so registering another's id takes nothing, and whether an id is
 * taken is told to nobody.
 */
export async function configureIntegration(
  em: EntityManager,
  keyRing: KeyRing,
  orgId: string,
  platformWord: string,
  input: IntegrationInput,
  baseUrl: string,
): Promise<IntegrationJson> {
  if (!isPlatform(platformWord)) throw new NotFoundError('unknown platform');
  const platform = platformWord;
  const adapter = adapters[platform];
  const classic = adapter.secretField.field === 'privateKey';
  if (!classic && input.privateKey !== undefined) throw new ValidationError(`privateKey applies to ${PRIVATE_KEY_PLATFORMS} only (send secret)`);
  if (adapter.routing.kind !== 'shared' && input.accountId !== undefined) throw new ValidationError(`accountId applies to ${SHARED_ROUTE_PLATFORMS} only`);
  const value = classic ? (input.privateKey ?? input.secret) : input.secret;
  // Kept exactly as given (signatures are computed over it), but a blank one is a mistake and a
  // short one can be guessed (cart-e's is in the URL, compared as a password).
  if (value === undefined || value.trim() === '') {
    throw new ValidationError(`${adapter.secretField.field} is required`);
  }
  if (value.length < MIN_SECRET_LENGTH) {
    throw new ValidationError(`${adapter.secretField.field} must be at least ${MIN_SECRET_LENGTH} characters: use the long random value the platform generates`);
  }
  const accountId = input.accountId === undefined ? undefined : input.accountId.trim() || null;

  await upsertIntegration(em, {
    orgId, platform, secret: classic ? null : sealSecret(keyRing, value), privateKey: classic ? sealSecret(keyRing, value) : null, accountId,
  });
  return integrationJson(baseUrl, orgId, platform, true);
}
