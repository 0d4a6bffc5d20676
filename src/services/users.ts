/** Staff users at sign-in: the account an email names, and the upgrade of an old password hash. */
import type { EntityManager } from '@mikro-orm/postgresql';
import { hashPassword } from '../security/secrets';

/** The account an email (normalised) signs in to, with its password hash. */
export async function signInAccount(em: EntityManager, email: string): Promise<{ id: string; passwordHash: string } | null> {
  const [row] = await em.execute<Array<{ id: string; passwordHash: string }>>(
    'select id, password_hash as "passwordHash" from app_user where email = ?',
    [email],
  );
  return row ?? null;
}

/**
 * Replaces a password hash made with weaker parameters, right after the password was verified.
 * Conditional on the old hash, so a password changed meanwhile is not overwritten. Returns the hash
 * now stored.
 */
export async function upgradePasswordHash(em: EntityManager, userId: string, oldHash: string, password: string): Promise<string> {
  const newHash = await hashPassword(password);
  const updated = await em.execute<{ affectedRows: number }>(
    'update app_user set password_hash = ? where id = ? and password_hash = ?', [newHash, userId, oldHash], 'run',
  );
  return updated.affectedRows === 1 ? newHash : oldHash;
}
