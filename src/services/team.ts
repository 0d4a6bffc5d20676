import type { EntityManager } from '@mikro-orm/postgresql';
import { countOwners, lockOrganisation, memberOf, passwordHashOf, setPasswordHash, setUserRole, teamMembers } from '../accounts/account-store';
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
 * Sets a user's role inside the organisation (another organisation's user is 404). An organisation
 * keeps at least one owner: with nobody changing their own role, only two owners demoting each
 * other at the same moment could leave none, so the count runs under a lock on the organisation's row.
 */
export async function setRole(em: EntityManager, orgId: string, actor: Actor, userId: string, role: Role): Promise<void> {
  if (!ROLES.includes(role)) throw new ValidationError(`role must be one of ${ROLES.join(', ')}`);
  await em.transactional(async (tx) => {
    await lockOrganisation(tx, orgId);
    const target = isUuid(userId) ? await memberOf(tx, orgId, userId) : undefined;
    if (!target) throw new NotFoundError('user not found');
    if (!mayChangeRoleOf(actor, target) || !grantableRoles(actor.role).includes(role)) {
      throw new ForbiddenError(actor.userId === userId ? 'you cannot change your own role' : 'your role may not make this change');
    }
    if (target.role === 'owner' && role !== 'owner') {
      if ((await countOwners(tx, orgId)) <= 1) throw new ValidationError('an organisation needs at least one owner');
    }
    await setUserRole(tx, userId, role);
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
