import type { EntityManager } from '@mikro-orm/postgresql';
import { isoUtc } from '../db/legacy-sql';
import { ForbiddenError, NotFoundError, ValidationError } from '../domain/errors';
import { ROLES, type Role } from '../domain/statuses';
import { isUuid } from '../domain/uuid';
import { hashPassword, verifyPassword } from '../security/secrets';
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
  const rows = await em.execute<Array<TeamMember & { created_at: string }>>(
    `select id, email, name, role, ${isoUtc('created_at')} as created_at from app_user where organisation_id = ?
      order by case role when 'owner' then 0 when 'admin' then 1 else 2 end, email`,
    [orgId],
  );
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
    await tx.execute('select id from organisation where id = ? for update', [orgId]);
    const rows = isUuid(userId)
      ? await tx.execute<Array<{ id: string; role: Role }>>('select id, role from app_user where id = ? and organisation_id = ?', [userId, orgId])
      : [];
    const target = rows[0];
    if (!target) throw new NotFoundError('user not found');
    if (!mayChangeRoleOf(actor, target) || !grantableRoles(actor.role).includes(role)) {
      throw new ForbiddenError(actor.userId === userId ? 'you cannot change your own role' : 'your role may not make this change');
    }
    if (target.role === 'owner' && role !== 'owner') {
      const [{ owners }] = await tx.execute<Array<{ owners: string }>>(
        `select count(*) as owners from app_user where organisation_id = ? and role = 'owner'`, [orgId],
      );
      if (Number(owners) <= 1) throw new ValidationError('an organisation needs at least one owner');
    }
    await tx.execute('update app_user set role = ? where id = ?', [role, userId]);
  });
}

/**
 * Changes the user's password after checking the current one. Returns the new hash: sessions carry
 * a fingerprint of it, so every session made with the old password ends.
 */
export async function changePassword(em: EntityManager, userId: string, current: string, next: string): Promise<string> {
  const rows = await em.execute<Array<{ password_hash: string }>>('select password_hash from app_user where id = ?', [userId]);
  if (!rows[0]) throw new NotFoundError('user not found');
  if (!(await verifyPassword(current, rows[0].password_hash))) throw new ValidationError('the current password is not right');
  const weak = passwordProblem(next);
  if (weak !== null) throw new ValidationError(`the new ${weak}`);
  if (next === current) throw new ValidationError('the new password is the same as the current one');
  const hash = await hashPassword(next);
  await em.execute('update app_user set password_hash = ? where id = ?', [hash, userId]);
  return hash;
}
