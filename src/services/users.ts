/**
 * Reading staff users for sign-in and sessions. The password hash leaves this module only to be
 * verified or fingerprinted by the session plugin.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { preparedRows } from '../db/sql';
import type { Role } from '../domain/statuses';

/** A user with what the dashboard shows of them and their organisation. */
export interface StaffUser {
  id: string;
  email: string;
  name: string;
  role: Role;
  passwordHash: string;
  orgId: string | null;
  orgName: string | null;
  subscriptionExpiresOn: string | null;
}

const BY_ID = `select u.id, u.email, u.name, u.role, u.password_hash as "passwordHash", u.organisation_id as "orgId",
    o.name as "orgName", o.subscription_expires_on::text as "subscriptionExpiresOn"
  from app_user u left join organisation o on o.id = u.organisation_id where u.id = ?`;

/** The user a session cookie names (read on every dashboard request). */
export async function staffUser(em: EntityManager, userId: string): Promise<StaffUser | null> {
  const [row] = await preparedRows<StaffUser>(em, BY_ID, [userId]);
  return row ?? null;
}

/** The account an email (normalised) signs in to, with its password hash. */
export async function signInAccount(em: EntityManager, email: string): Promise<{ id: string; passwordHash: string } | null> {
  const [row] = await em.execute<Array<{ id: string; passwordHash: string }>>(
    'select id, password_hash as "passwordHash" from app_user where email = ?',
    [email],
  );
  return row ?? null;
}
