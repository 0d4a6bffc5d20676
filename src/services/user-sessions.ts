/**
 * Dashboard sessions kept on the server (user_session): opened at sign-in, read on every dashboard
 * request together with the user, touched at most once a minute, ended by sign-out, "sign out
 * everywhere", a password change or SESSION_IDLE_TIMEOUT.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  activeSessions, deleteSession, deleteStaleSessions, deleteUserSessions, insertSession, sessionUserRow, touchSession,
  type ActiveSession, type StaffUser,
} from '../accounts/session-store';
import { UseStamps } from './use-stamps';

export type { ActiveSession, StaffUser } from '../accounts/session-store';

const TOUCH_INTERVAL_MS = 60_000;
const sessionTouches = new UseStamps(TOUCH_INTERVAL_MS);

export async function openSession(em: EntityManager, session: { id: string; userId: string; userAgent: string | null }, now: Date): Promise<void> {
  await insertSession(em, session, now);
}

/**
 * The user of a session that is open and was used within `idleMs`, or null. Records this use, at
 * most once a minute per process (UseStamps): a write on every request would cap the dashboard at
 * one row's update rate.
 */
export async function sessionUser(em: EntityManager, sessionId: string, userId: string, now: Date, idleMs: number): Promise<StaffUser | null> {
  const row = await sessionUserRow(em, sessionId, userId, new Date(now.getTime() - idleMs), new Date(now.getTime() - TOUCH_INTERVAL_MS));
  if (!row) return null;
  const { touchDue, ...user } = row;
  if (touchDue) await sessionTouches.write(sessionId, now.getTime(), () => touchSession(em, sessionId, now));
  return user;
}

export async function endSession(em: EntityManager, sessionId: string): Promise<void> {
  await deleteSession(em, sessionId);
}

/** Ends every session of the user, but `keep` when given (the one that asked). */
export async function endUserSessions(em: EntityManager, userId: string, keep?: string): Promise<number> {
  return deleteUserSessions(em, userId, keep || null);
}

export async function listSessions(em: EntityManager, userId: string, now: Date, idleMs: number): Promise<ActiveSession[]> {
  return activeSessions(em, userId, new Date(now.getTime() - idleMs));
}

/** Sessions idle past the timeout, or older than the cap: housekeeping. */
export async function pruneSessions(em: EntityManager, now: Date, idleMs: number, maxAgeMs: number): Promise<number> {
  return deleteStaleSessions(em, new Date(now.getTime() - idleMs), new Date(now.getTime() - maxAgeMs));
}
