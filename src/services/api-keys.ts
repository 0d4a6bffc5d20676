import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { apiKeyInfoOf, keyOwnerByHash, recordKeyUse, replaceApiKey } from '../accounts/account-store';
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
  if (!(await replaceApiKey(em, userId, key.hash, key.prefix))) throw new NotFoundError('user not found');
  return key.key;
}

export async function apiKeyInfo(em: EntityManager, userId: string): Promise<ApiKeyInfo> {
  const row = await apiKeyInfoOf(em, userId);
  if (!row) throw new NotFoundError('user not found');
  return row;
}

/** How often a key's use is written: writing one row on every request would cap every endpoint at that row's update rate. */
const KEY_USE_INTERVAL_MS = 60_000;
/** Past this many keys the ones written over an interval ago are forgotten, so the map stays small. */
const KEY_USES_REMEMBERED = 10_000;

/**
 * The keys (by hash) whose use this process wrote, and when. The row says whether its stamp is
 * stale, but every request that read it before the first write landed would write it again, each
 * waiting on the row lock with a pooled connection: dozens at a time under load, once a minute.
 * By hash, not user: a refreshed key is written at its first use.
 */
const keyUsesWritten = new Map<string, number>();

/** Whether this process should write the key's use now, noting that it does. */
function claimKeyUseWrite(keyHash: string, now: number): boolean {
  const written = keyUsesWritten.get(keyHash);
  if (written !== undefined && now - written < KEY_USE_INTERVAL_MS) return false;
  if (keyUsesWritten.size >= KEY_USES_REMEMBERED) {
    for (const [hash, at] of keyUsesWritten) if (now - at >= KEY_USE_INTERVAL_MS) keyUsesWritten.delete(hash);
  }
  keyUsesWritten.set(keyHash, now);
  return true;
}

/**
 * The user an API key belongs to (only its hash is stored), or null. Records the key's use, best
 * effort and at most once a minute per process (see keyUsesWritten).
 */
export async function keyOwner(em: EntityManager, key: string): Promise<Omit<Caller, 'via'> | null> {
  const keyHash = sha256Hex(key);
  const row = await keyOwnerByHash(em, keyHash);
  if (!row) return null;
  const { lastUseStale, ...owner } = row;
  if (lastUseStale && claimKeyUseWrite(keyHash, Date.now())) {
    void recordKeyUse(em, owner.userId).catch(() => keyUsesWritten.delete(keyHash));
  }
  return owner;
}
