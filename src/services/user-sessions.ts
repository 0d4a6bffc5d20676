/**
 * Dashboard sessions kept on the server (user_session): opened at sign-in, read on every dashboard
 * request together with the user, touched at most once a minute, ended by sign-out, "sign out
 * everywhere", a password change or SESSION_IDLE_TIMEOUT.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { isoUtc, preparedRows } from '../db/legacy-sql';
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
  catalogueVersion: string | null;
}

const SESSION_USER = `select u.id, u.email, u.name, u.role, u.password_hash as "passwordHash", u.organisation_id as "orgId",
    o.name as "orgName", o.subscription_expires_on::text as "subscriptionExpiresOn",
    o.catalogue_version::text as "catalogueVersion", s.last_seen_at < ? as "touchDue"
  from user_session s join app_user u on u.id = s.user_id left join organisation o on o.id = u.organisation_id
  where s.id = ? and s.user_id = ? and s.last_seen_at > ?`;

export async function openSession(em: EntityManager, session: { id: string; userId: string; userAgent: string | null }, now: Date): Promise<void> {
  await em.execute(
    'insert into user_session (id, user_id, created_at, last_seen_at, user_agent) values (?, ?, ?, ?, ?)',
    [session.id, session.userId, now, now, session.userAgent],
  );
}

/**
 * The user of a session that is open and was used within `idleMs`, or null. Records this use, at
 * most once a minute (a write on every request would cap the dashboard at one row's update rate).
 */
export async function sessionUser(em: EntityManager, sessionId: string, userId: string, now: Date, idleMs: number): Promise<StaffUser | null> {
  const [row] = await preparedRows<StaffUser & { touchDue: boolean }>(
    em, SESSION_USER, [new Date(now.getTime() - 60_000), sessionId, userId, new Date(now.getTime() - idleMs)],
  );
  if (!row) return null;
  const { touchDue, ...user } = row;
  if (touchDue) await em.execute('update user_session set last_seen_at = ? where id = ?', [now, sessionId]);
  return user;
}

export async function endSession(em: EntityManager, sessionId: string): Promise<void> {
  await em.execute('delete from user_session where id = ?', [sessionId]);
}

/** Ends every session of the user, but `keep` when given (the one that asked). */
export async function endUserSessions(em: EntityManager, userId: string, keep?: string): Promise<number> {
  const result = await em.execute<{ affectedRows: number }>(
    `delete from user_session where user_id = ?${keep ? ' and id <> ?' : ''}`, keep ? [userId, keep] : [userId], 'run',
  );
  return result.affectedRows;
}

export interface ActiveSession {
  id: string;
  createdAt: string;
  lastSeenAt: string;
  userAgent: string | null;
}

export async function listSessions(em: EntityManager, userId: string, now: Date, idleMs: number): Promise<ActiveSession[]> {
  return em.execute<ActiveSession[]>(
    `select id, ${isoUtc('created_at')} as "createdAt", ${isoUtc('last_seen_at')} as "lastSeenAt", user_agent as "userAgent"
       from user_session where user_id = ? and last_seen_at > ? order by last_seen_at desc`,
    [userId, new Date(now.getTime() - idleMs)],
  );
}

/** Sessions idle past the timeout, or older than the cap: housekeeping. */
export async function pruneSessions(em: EntityManager, now: Date, idleMs: number, maxAgeMs: number): Promise<number> {
  const result = await em.execute<{ affectedRows: number }>(
    'delete from user_session where last_seen_at < ? or created_at < ?',
    [new Date(now.getTime() - idleMs), new Date(now.getTime() - maxAgeMs)], 'run',
  );
  return result.affectedRows;
}
