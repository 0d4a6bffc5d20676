/** Staff users at sign-in: the account an email names, and the upgrade of an old password hash. */
import type { EntityManager } from '@mikro-orm/postgresql';
import { replacePasswordHash, userByEmail } from '../accounts/account-store';
import type { PasswordHasher } from '../security/password-hashing';

/** The account an email (normalised) signs in to, with its password hash. */
export async function signInAccount(em: EntityManager, email: string): Promise<{ id: string; passwordHash: string } | null> {
  return (await userByEmail(em, email)) ?? null;
}

/**
 * Replaces a password hash made with weaker parameters, right after the password was verified.
 * Conditional on the old hash, so a password changed meanwhile is not overwritten. Returns the hash
 * now stored.
 */
export async function upgradePasswordHash(
  em: EntityManager, passwords: PasswordHasher, userId: string, oldHash: string, password: string,
): Promise<string> {
  const newHash = await passwords.hash(password);
  return (await replacePasswordHash(em, userId, oldHash, newHash)) ? newHash : oldHash;
}
