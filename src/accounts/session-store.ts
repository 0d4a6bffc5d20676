/**
 * Dashboard sessions kept on the server. Owns `user_session`: opened at sign-in, read with its user
 * and organisation on every dashboard request, touched, ended, listed and pruned.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { isoUtc, sql, statement, type NoRows } from '../db/sql';
import type { Role } from '../domain/statuses';
import { CALLER_ORGANISATION_COLUMNS, type CallerOrganisationRow } from './account-store';

/** A user with what the dashboard shows of them and their organisation. */
export interface StaffUser extends CallerOrganisationRow {
  id: string;
  email: string;
  name: string;
  role: Role;
  passwordHash: string;
  orgId: string | null;
  orgName: string | null;
}

const sessionUserRead = statement<StaffUser & { touchDue: boolean }, { touchBefore: Date; sessionId: string; userId: string; idleSince: Date }>(
  {
    id: true, email: true, name: true, role: true, passwordHash: true, orgId: true, orgName: true,
    subscriptionExpiresOn: true, catalogueVersion: true, touchDue: true,
  },
  (p) => sql`select u.id, u.email, u.name, u.role, u.password_hash as "passwordHash", u.organisation_id as "orgId",
    o.name as "orgName", ${CALLER_ORGANISATION_COLUMNS}, s.last_seen_at < ${p.touchBefore} as "touchDue"
  from user_session s join app_user u on u.id = s.user_id left join organisation o on o.id = u.organisation_id
  where s.id = ${p.sessionId} and s.user_id = ${p.userId} and s.last_seen_at > ${p.idleSince}`,
);

/**
 * The user of the session if it was last seen after `idleSince`, with whether it was last seen
 * before `touchBefore`: one prepared statement (every dashboard request).
 */
export function sessionUserRow(
  em: EntityManager, sessionId: string, userId: string, idleSince: Date, touchBefore: Date,
): Promise<(StaffUser & { touchDue: boolean }) | undefined> {
  return sessionUserRead.first(em, { touchBefore, sessionId, userId, idleSince });
}

const sessionInsert = statement<NoRows, { id: string; userId: string; now: Date; userAgent: string | null }>(
  {},
  (p) => sql`insert into user_session (id, user_id, created_at, last_seen_at, user_agent) values (${p.id}, ${p.userId}, ${p.now}, ${p.now}, ${p.userAgent})`,
);

export async function insertSession(em: EntityManager, session: { id: string; userId: string; userAgent: string | null }, now: Date): Promise<void> {
  await sessionInsert.run(em, { id: session.id, userId: session.userId, now, userAgent: session.userAgent });
}

const sessionTouch = statement<NoRows, { now: Date; sessionId: string }>(
  {},
  (p) => sql`update user_session set last_seen_at = ${p.now} where id = ${p.sessionId}`,
);

export async function touchSession(em: EntityManager, sessionId: string, now: Date): Promise<void> {
  await sessionTouch.run(em, { now, sessionId });
}

const sessionDelete = statement<NoRows, { sessionId: string }>({}, (p) => sql`delete from user_session where id = ${p.sessionId}`);

export async function deleteSession(em: EntityManager, sessionId: string): Promise<void> {
  await sessionDelete.run(em, { sessionId });
}

const USER_SESSIONS_DELETE = sql`delete from user_session where user_id = `;
const userSessionsDelete = statement<NoRows, { userId: string }>({}, (p) => sql`${USER_SESSIONS_DELETE}${p.userId}`);
const userSessionsDeleteBut = statement<NoRows, { userId: string; keep: string }>(
  {},
  (p) => sql`${USER_SESSIONS_DELETE}${p.userId} and id <> ${p.keep}`,
);

/** Deletes every session of the user but `keep` (when not null); how many went. */
export function deleteUserSessions(em: EntityManager, userId: string, keep: string | null): Promise<number> {
  return keep === null ? userSessionsDelete.run(em, { userId }) : userSessionsDeleteBut.run(em, { userId, keep });
}

/** An open session as the Security page lists it. */
export interface ActiveSession {
  id: string;
  createdAt: string;
  lastSeenAt: string;
  userAgent: string | null;
}

const sessionsRead = statement<ActiveSession, { userId: string; idleSince: Date }>(
  { id: true, createdAt: true, lastSeenAt: true, userAgent: true },
  (p) => sql`select id, ${isoUtc('created_at')} as "createdAt", ${isoUtc('last_seen_at')} as "lastSeenAt", user_agent as "userAgent"
       from user_session where user_id = ${p.userId} and last_seen_at > ${p.idleSince} order by last_seen_at desc`,
);

/** The user's sessions last seen after `idleSince`, the latest first. */
export function activeSessions(em: EntityManager, userId: string, idleSince: Date): Promise<ActiveSession[]> {
  return sessionsRead.rows(em, { userId, idleSince });
}

const sessionsPrune = statement<NoRows, { idleSince: Date; createdBefore: Date }>(
  {},
  (p) => sql`delete from user_session where last_seen_at < ${p.idleSince} or created_at < ${p.createdBefore}`,
);

/** Deletes the sessions last seen before `idleSince` or made before `createdBefore`; how many went. */
export function deleteStaleSessions(em: EntityManager, idleSince: Date, createdBefore: Date): Promise<number> {
  return sessionsPrune.run(em, { idleSince, createdBefore });
}
