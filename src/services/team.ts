import type { EntityManager } from '@mikro-orm/postgresql';
import { countOwners, deleteUser, lockOrganisation, memberOf, passwordHashOf, setPasswordHash, setUserRole, teamMembers } from '../accounts/account-store';
import { ForbiddenError, NotFoundError, ValidationError } from '../domain/errors';
import { ROLES, type Role } from '../domain/statuses';
import { isUuid } from '../domain/uuid';
import type { PasswordHasher } from '../security/password-hashing';
import { passwordProblem } from '../security/password-policy';

export interface TeamMember {
  id: string;
  email: string;
  name: string;
  role: Role;
  createdAt: Date;
}

export interface Actor {
  userId: string;
  role: Role;
}

/** The organisation's users, owners first, then by email. */
export async function listTeam(em: EntityManager, orgId: string): Promise<TeamMember[]> {
  const rows = await teamMembers(em, orgId);
  return rows.map((r) => ({ id: r.id, email: r.email, name: r.name, role: r.role, createdAt: new Date(r.created_at) }));
}

/** Which roles the actor may hand out: owners any, admins admin or member, members none. */
export function grantableRoles(actor: Role): Role[] {
  if (actor === 'owner') return [...ROLES];
  if (actor === 'admin') return ['admin', 'member'];
  return [];
}

/** Whether the actor may change this user's role at all (never their own; admins never an owner's). */
export function mayChangeRoleOf(actor: Actor, target: Pick<TeamMember, 'id' | 'role'>): boolean {
  if (actor.userId === target.id) return false;
  if (actor.role === 'owner') return true;
  return actor.role === 'admin' && target.role !== 'owner';
}

/**
 * Runs `change` on a user of the organisation under a lock on the organisation's row, with the actor
 * and the target as they stand once it is held: an actor demoted or removed by a change that took the
 * lock first is refused (another organisation's user, or a malformed id, is 404). `allowed` says
 * whether the actor, as it now stands, may make the change.
 */
async function changeMember(
  em: EntityManager, orgId: string, actor: Actor, userId: string,
  allowed: (actor: Actor, target: Pick<TeamMember, 'id' | 'role'>) => boolean,
  change: (tx: EntityManager, target: Pick<TeamMember, 'id' | 'role'>) => Promise<void>,
): Promise<void> {
  await em.transactional(async (tx) => {
    await lockOrganisation(tx, orgId);
    const target = isUuid(userId) ? await memberOf(tx, orgId, userId) : undefined;
    if (!target) throw new NotFoundError('user not found');
    const now = await memberOf(tx, orgId, actor.userId);
    if (!now) throw new ForbiddenError('you are no longer a member of this organisation');
    const current: Actor = { userId: now.id, role: now.role };
    if (!allowed(current, target)) {
      throw new ForbiddenError(actor.userId === userId ? 'you cannot change your own role or remove yourself' : 'your role may not make this change');
    }
    await change(tx, target);
  });
}

/**
 * Sets a user's role inside the organisation. An organisation keeps at least one owner: with nobody
 * changing their own role, only two owners demoting each other at the same moment could leave
 * none, so the count runs under a lock on the organisation's row.
 */
export async function setRole(em: EntityManager, orgId: string, actor: Actor, userId: string, role: Role): Promise<void> {
  if (!ROLES.includes(role)) throw new ValidationError(`role must be one of ${ROLES.join(', ')}`);
  await changeMember(em, orgId, actor, userId, (current, target) => mayChangeRoleOf(current, target) && grantableRoles(current.role).includes(role), async (tx, target) => {
    if (target.role === 'owner' && role !== 'owner' && (await countOwners(tx, orgId)) <= 1) {
      throw new ValidationError('an organisation needs at least one owner');
    }
    await setUserRole(tx, userId, role);
  });
}

/**
 * Removes a user from the organisation (someone who left): their sessions end and their API key stops
 * working at once. Who may remove whom is who may change whose role: owners anyone but themselves,
 * admins admins and members. The last owner is never removed.
 */
export async function removeMember(em: EntityManager, orgId: string, actor: Actor, userId: string): Promise<void> {
  await changeMember(em, orgId, actor, userId, mayChangeRoleOf, async (tx, target) => {
    if (target.role === 'owner' && (await countOwners(tx, orgId)) <= 1) throw new ValidationError('an organisation needs at least one owner');
    await deleteUser(tx, orgId, userId);
  });
}

/**
 * Changes the user's password after checking the current one. Returns the new hash: sessions carry
 * a fingerprint of it, so every session made with the old password ends.
 */
export async function changePassword(em: EntityManager, passwords: PasswordHasher, userId: string, current: string, next: string): Promise<string> {
  const passwordHash = await passwordHashOf(em, userId);
  if (passwordHash === undefined) throw new NotFoundError('user not found');
  if (!(await passwords.verify(current, passwordHash))) throw new ValidationError('the current password is not right');
  const weak = passwordProblem(next);
  if (weak !== null) throw new ValidationError(`the new ${weak}`);
  if (next === current) throw new ValidationError('the new password is the same as the current one');
  const hash = await passwords.hash(next);
  await setPasswordHash(em, userId, hash);
  return hash;
}
