import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { apiKeyInfoOf, keyOwnerByHash, recordKeyUse, replaceApiKey } from '../accounts/account-store';
import type { Caller } from '../domain/access';
import { NotFoundError } from '../domain/errors';
import { mintApiKey, sha256Hex } from '../security/secrets';
import { UseStamps } from './use-stamps';

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
  if (!(await replaceApiKey(em, userId, key.hash, key.prefix))) throw new NotFoundError('user not found');
  return key.key;
}

export async function apiKeyInfo(em: EntityManager, userId: string): Promise<ApiKeyInfo> {
  const row = await apiKeyInfoOf(em, userId);
  if (!row) throw new NotFoundError('user not found');
  return row;
}

/** The key owner's read calls a stamp over a minute old stale. */
const KEY_USE_INTERVAL_MS = 60_000;
/** Keys by hash, not user: a refreshed key is written at its first use. */
const keyUses = new UseStamps(KEY_USE_INTERVAL_MS);

/**
 * The user an API key belongs to (only its hash is stored), or null. Records the key's use, best
 * effort and at most once a minute per process (UseStamps): writing one row on every request would
 * cap every endpoint at that row's update rate.
 */
export async function keyOwner(em: EntityManager, key: string): Promise<Omit<Caller, 'via'> | null> {
  const keyHash = sha256Hex(key);
  const row = await keyOwnerByHash(em, keyHash);
  if (!row) return null;
  const { lastUseStale, ...owner } = row;
  if (lastUseStale) {
    void keyUses.write(keyHash, Date.now(), () => recordKeyUse(em, owner.userId)).catch(() => undefined);
  }
  return owner;
}
