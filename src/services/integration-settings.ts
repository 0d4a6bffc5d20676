import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { ConflictError, NotFoundError, ValidationError } from '../domain/errors';
import { isPlatform, PLATFORMS, type Platform } from '../domain/platforms';

/** What Settings, Integrations shows of one platform: never a secret. */
export const IntegrationJsonSchema = z.object({
  platform: z.enum(PLATFORMS),
  configured: z.boolean(),
  webhookUrl: z.string(),
  note: z.string().optional().describe('what the seller must still do with the URL, where something is needed'),
});
export type IntegrationJson = z.infer<typeof IntegrationJsonSchema>;

/** PUT body: `secret`; reseller-d-classic `privateKey` (`secret` accepted too); payments-c also `accountId`. */
export const IntegrationInputSchema = z.object({
  secret: z.string().optional().describe('the signing or shared secret (every platform but reseller-d-classic)'),
  privateKey: z.string().optional().describe('reseller-d-classic: the notification private key'),
  accountId: z.string().optional().describe('payments-c: the account id its events carry; absent: unchanged, empty: removed'),
});
export type IntegrationInput = z.infer<typeof IntegrationInputSchema>;

const NOTES: Partial<Record<Platform, string>> = {
  'cart-e': 'append ?secret=<your secret> to this URL where cart E asks for it: cart E sends the secret in the query string',
  'payments-c': 'one URL for every organisation: events name the organisation in metadata.org_id or by the registered accountId',
};

/** Where a platform sends this organisation's order webhooks (payments-c has one URL for all). */
export function webhookUrl(baseUrl: string, orgId: string, platform: Platform): string {
  return platform === 'payments-c' ? `${baseUrl}/webhooks/payments-c` : `${baseUrl}/webhooks/${orgId}/${platform}`;
}

function integrationJson(baseUrl: string, orgId: string, platform: Platform, configured: boolean): IntegrationJson {
  const note = NOTES[platform];
  return { platform, configured, webhookUrl: webhookUrl(baseUrl, orgId, platform), ...(note ? { note } : {}) };
}

/** The six platforms, each configured or not. */
export async function listIntegrations(em: EntityManager, orgId: string, baseUrl: string): Promise<IntegrationJson[]> {
  const rows = await em.execute<Array<{ platform: string }>>(
    `select platform from integration
     where organisation_id = ? and (coalesce(secret, '') <> '' or coalesce(private_key, '') <> '')`,
    [orgId],
  );
  const configured = new Set(rows.map((r) => r.platform));
  return PLATFORMS.map((platform) => integrationJson(baseUrl, orgId, platform, configured.has(platform)));
}

/**
 * Sets a platform's secret (upsert on organisation + platform). A payments-c account id may belong
 * to one organisation only: events are routed by it. The check and the write run under a
 * transaction-scoped advisory lock on the account id, so two organisations cannot race to it.
 */
export async function configureIntegration(
  em: EntityManager,
  orgId: string,
  platformWord: string,
  input: IntegrationInput,
  baseUrl: string,
): Promise<IntegrationJson> {
  if (!isPlatform(platformWord)) throw new NotFoundError('unknown platform');
  const platform = platformWord;
  const classic = platform === 'reseller-d-classic';
  if (!classic && input.privateKey !== undefined) throw new ValidationError('privateKey applies to reseller-d-classic only (send secret)');
  if (platform !== 'payments-c' && input.accountId !== undefined) throw new ValidationError('accountId applies to payments-c only');
  const value = classic ? (input.privateKey ?? input.secret) : input.secret;
  // Kept exactly as given (signatures are computed over it), but a blank one is a mistake.
  if (value === undefined || value.trim() === '') {
    throw new ValidationError(`${classic ? 'privateKey' : 'secret'} is required`);
  }
  const accountId = input.accountId === undefined ? undefined : input.accountId.trim() || null;

  await em.transactional(async (tx) => {
    if (accountId) {
      await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [`payments-c-account:${accountId}`]);
      const taken = await tx.execute(
        `select 1 from integration where platform = 'payments-c' and account_id = ? and organisation_id <> ?`,
        [accountId, orgId],
      );
      if (taken.length > 0) throw new ConflictError('that payments-c account is registered by another organisation');
    }
    await tx.execute(
      `insert into integration (id, organisation_id, platform, secret, private_key, account_id, updated_at)
       values (gen_random_uuid(), ?, ?, ?, ?, ?, now())
       on conflict (organisation_id, platform) do update set
         secret = excluded.secret, private_key = excluded.private_key,
         account_id = case when ? then excluded.account_id else integration.account_id end,
         updated_at = now()`,
      [orgId, platform, classic ? null : value, classic ? value : null, accountId ?? null, accountId !== undefined],
    );
  });
  return integrationJson(baseUrl, orgId, platform, true);
}
