import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { isoUtc, preparedRows } from '../db/legacy-sql';
import type { Caller } from '../domain/access';
import { NotFoundError } from '../domain/errors';
import { mintApiKey, sha256Hex } from '../security/secrets';

/** What the API Key page shows of a key: never the key itself. */
export const ApiKeyInfoSchema = z.object({
  prefix: z.string().describe('the first characters of the key'),
  lastUsedAt: z.string().nullable(),
});
export type ApiKeyInfo = z.infer<typeof ApiKeyInfoSchema>;

/**
 * Mints the user's new key and replaces the stored hash in one statement: the old key matches no
 * user from then on. The full key is returned here, once.
 */
export async function refreshApiKey(em: EntityManager, userId: string): Promise<string> {
  const key = mintApiKey();
  const updated = await em.execute<{ affectedRows: number }>(
    'update app_user set api_key_hash = ?, api_key_prefix = ?, api_key_last_used_at = null where id = ?',
    [key.hash, key.prefix, userId],
    'run',
  );
  if (updated.affectedRows !== 1) throw new NotFoundError('user not found');
  return key.key;
}

export async function apiKeyInfo(em: EntityManager, userId: string): Promise<ApiKeyInfo> {
  const [row] = await em.execute<ApiKeyInfo[]>(
    `select api_key_prefix as prefix, ${isoUtc('api_key_last_used_at')} as "lastUsedAt" from app_user where id = ?`,
    [userId],
  );
  if (!row) throw new NotFoundError('user not found');
  return row;
}

const KEY_OWNER = `select u.id as "userId", u.organisation_id as "orgId", u.role,
    o.subscription_expires_on::text as "subscriptionExpiresOn", o.catalogue_version::text as "catalogueVersion",
    coalesce(u.api_key_last_used_at < now() - interval '1 minute', true) as "lastUseStale"
  from app_user u left join organisation o on o.id = u.organisation_id where u.api_key_hash = ?`;

/**
 * The user an API key belongs to (only its hash is stored), or null. Records the key's use, best
 * effort and at most once a minute: writing one row on every request would cap every endpoint at
 * that row's update rate.
 */
export async function keyOwner(em: EntityManager, key: string): Promise<Omit<Caller, 'via'> | null> {
  const [row] = await preparedRows<Omit<Caller, 'via'> & { lastUseStale: boolean }>(em, KEY_OWNER, [sha256Hex(key)]);
  if (!row) return null;
  const { lastUseStale, ...owner } = row;
  if (lastUseStale) {
    void em.execute('update app_user set api_key_last_used_at = now() where id = ?', [owner.userId]).catch(() => undefined);
  }
  return owner;
}
