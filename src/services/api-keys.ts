import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { isoUtc } from '../db/sql';
import { NotFoundError } from '../domain/errors';
import { mintApiKey } from '../security/secrets';

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
