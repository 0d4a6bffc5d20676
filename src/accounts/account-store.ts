/**
 * Organisations and their staff users. Owns `organisation` (its settings, the row the team's role
 * changes lock) and `app_user` (sign-in, passwords, roles, and the user's API key: its hash, prefix
 * and last use are columns of app_user).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { isoUtc, sql, statement, type NoRows } from '../db/sql';
import type { Role } from '../domain/statuses';

// ---------------------------------------------------------------------------------------------
// The caller of a request (API key here; the session's read is in session-store.ts)
// ---------------------------------------------------------------------------------------------

/** The caller's organisation as every request reads it (`o` joined to the user `u`). */
export interface CallerOrganisationRow {
  subscriptionExpiresOn: string | null;
  catalogueVersion: string | null;
}

/** The columns of CallerOrganisationRow, from organisation `o`. */
export const CALLER_ORGANISATION_COLUMNS = sql`o.subscription_expires_on::text as "subscriptionExpiresOn", o.catalogue_version::text as "catalogueVersion"`;

/** The owner of an API key, with whether its last recorded use is over a minute old. */
export interface KeyOwnerRow extends CallerOrganisationRow {
  userId: string;
  orgId: string | null;
  role: Role;
  lastUseStale: boolean;
}

const keyOwnerRead = statement<KeyOwnerRow, { keyHash: string }>(
  { userId: true, orgId: true, role: true, subscriptionExpiresOn: true, catalogueVersion: true, lastUseStale: true },
  (p) => sql`select u.id as "userId", u.organisation_id as "orgId", u.role,
    ${CALLER_ORGANISATION_COLUMNS},
    coalesce(u.api_key_last_used_at < now() - interval '1 minute', true) as "lastUseStale"
  from app_user u left join organisation o on o.id = u.organisation_id where u.api_key_hash = ${p.keyHash}`,
);

/** The user whose API key has this hash, or undefined: one prepared statement (every API request). */
export function keyOwnerByHash(em: EntityManager, keyHash: string): Promise<KeyOwnerRow | undefined> {
  return keyOwnerRead.first(em, { keyHash });
}

const keyUseWrite = statement<NoRows, { userId: string }>(
  {},
  (p) => sql`update app_user set api_key_last_used_at = now() where id = ${p.userId}`,
);

/** Records that the user's API key was used now. */
export async function recordKeyUse(em: EntityManager, userId: string): Promise<void> {
  await keyUseWrite.run(em, { userId });
}

const keyReplace = statement<NoRows, { keyHash: string; keyPrefix: string; userId: string }>(
  {},
  (p) => sql`update app_user set api_key_hash = ${p.keyHash}, api_key_prefix = ${p.keyPrefix}, api_key_last_used_at = null where id = ${p.userId}`,
);

/** Stores the user's new key (its hash and prefix), unused so far; false when there is no such user. */
export async function replaceApiKey(em: EntityManager, userId: string, keyHash: string, keyPrefix: string): Promise<boolean> {
  return (await keyReplace.run(em, { keyHash, keyPrefix, userId })) === 1;
}

/** What the API Key page shows of a key. */
export interface ApiKeyInfoRow {
  prefix: string;
  lastUsedAt: string | null;
}

const apiKeyInfoRead = statement<ApiKeyInfoRow, { userId: string }>(
  { prefix: true, lastUsedAt: true },
  (p) => sql`select api_key_prefix as prefix, ${isoUtc('api_key_last_used_at')} as "lastUsedAt" from app_user where id = ${p.userId}`,
);

export function apiKeyInfoOf(em: EntityManager, userId: string): Promise<ApiKeyInfoRow | undefined> {
  return apiKeyInfoRead.first(em, { userId });
}

// ---------------------------------------------------------------------------------------------
// Sign-in and passwords
// ---------------------------------------------------------------------------------------------

const signInRead = statement<{ id: string; passwordHash: string }, { email: string }>(
  { id: true, passwordHash: true },
  (p) => sql`select id, password_hash as "passwordHash" from app_user where email = ${p.email}`,
);

/** The user an email (normalised) names, with the password hash. */
export function userByEmail(em: EntityManager, email: string): Promise<{ id: string; passwordHash: string } | undefined> {
  return signInRead.first(em, { email });
}

const passwordHashRead = statement<{ password_hash: string }, { userId: string }>(
  { password_hash: true },
  (p) => sql`select password_hash from app_user where id = ${p.userId}`,
);

/** The user's password hash, or undefined for no such user. */
export async function passwordHashOf(em: EntityManager, userId: string): Promise<string | undefined> {
  return (await passwordHashRead.first(em, { userId }))?.password_hash;
}

const passwordWrite = statement<NoRows, { hash: string; userId: string }>(
  {},
  (p) => sql`update app_user set password_hash = ${p.hash} where id = ${p.userId}`,
);

export async function setPasswordHash(em: EntityManager, userId: string, hash: string): Promise<void> {
  await passwordWrite.run(em, { hash, userId });
}

const passwordReplace = statement<NoRows, { newHash: string; userId: string; oldHash: string }>(
  {},
  (p) => sql`update app_user set password_hash = ${p.newHash} where id = ${p.userId} and password_hash = ${p.oldHash}`,
);

/** Replaces the hash only while it is still `oldHash`; whether it did. */
export async function replacePasswordHash(em: EntityManager, userId: string, oldHash: string, newHash: string): Promise<boolean> {
  return (await passwordReplace.run(em, { newHash, userId, oldHash })) === 1;
}

// ---------------------------------------------------------------------------------------------
// The team
// ---------------------------------------------------------------------------------------------

/** A user as the team page lists them (created_at as ISO text). */
export interface TeamMemberRow {
  id: string;
  email: string;
  name: string;
  role: Role;
  created_at: string;
}

const teamRead = statement<TeamMemberRow, { orgId: string }>(
  { id: true, email: true, name: true, role: true, created_at: true },
  (p) => sql`select id, email, name, role, ${isoUtc('created_at')} as created_at from app_user where organisation_id = ${p.orgId}
      order by case role when 'owner' then 0 when 'admin' then 1 else 2 end, email`,
);

/** The organisation's users, owners first, then admins, then by email. */
export function teamMembers(em: EntityManager, orgId: string): Promise<TeamMemberRow[]> {
  return teamRead.rows(em, { orgId });
}

const organisationLock = statement<{ id: string }, { orgId: string }>(
  { id: true },
  (p) => sql`select id from organisation where id = ${p.orgId} for update`,
);

/** Locks the organisation's row for the caller's transaction. */
export async function lockOrganisation(tx: EntityManager, orgId: string): Promise<void> {
  await organisationLock.run(tx, { orgId });
}

const memberRead = statement<{ id: string; role: Role }, { userId: string; orgId: string }>(
  { id: true, role: true },
  (p) => sql`select id, role from app_user where id = ${p.userId} and organisation_id = ${p.orgId}`,
);

/** A user of this organisation (another organisation's: undefined); `userId` must be a UUID. */
export function memberOf(em: EntityManager, orgId: string, userId: string): Promise<{ id: string; role: Role } | undefined> {
  return memberRead.first(em, { userId, orgId });
}

const ownerCount = statement<{ owners: string }, { orgId: string }>(
  { owners: true },
  (p) => sql`select count(*) as owners from app_user where organisation_id = ${p.orgId} and role = 'owner'`,
);

export async function countOwners(em: EntityManager, orgId: string): Promise<number> {
  const row = await ownerCount.first(em, { orgId });
  return Number(row!.owners);
}

const roleWrite = statement<NoRows, { role: string; userId: string }>(
  {},
  (p) => sql`update app_user set role = ${p.role} where id = ${p.userId}`,
);

export async function setUserRole(em: EntityManager, userId: string, role: Role): Promise<void> {
  await roleWrite.run(em, { role, userId });
}

const userDelete = statement<NoRows, { userId: string; orgId: string }>(
  {},
  (p) => sql`delete from app_user where id = ${p.userId} and organisation_id = ${p.orgId}`,
);

/**
 * Removes a user from the organisation: the account, with its API key (a column of it) and its
 * sessions (deleted with it). What the user did stays in the activity log under their address.
 */
export async function deleteUser(em: EntityManager, orgId: string, userId: string): Promise<void> {
  await userDelete.run(em, { userId, orgId });
}

/** The organisation's name with the addresses of its owners and admins (a row with a null email when there are none). */
const staffEmailsRead = statement<{ org_name: string; email: string | null }, { orgId: string }>(
  { org_name: true, email: true },
  (p) => sql`select o.name as org_name, u.email from organisation o left join app_user u on u.organisation_id = o.id and u.role in ('owner', 'admin')
     where o.id = ${p.orgId} order by u.email`,
);

export function organisationStaffEmails(em: EntityManager, orgId: string): Promise<Array<{ org_name: string; email: string | null }>> {
  return staffEmailsRead.rows(em, { orgId });
}

// ---------------------------------------------------------------------------------------------
// The organisation's settings
// ---------------------------------------------------------------------------------------------

export interface OrganisationSettingsRow {
  name: string;
  support_email: string | null;
  reminder_after_minutes: number | null;
}

const SETTINGS_KEYS = { name: true, support_email: true, reminder_after_minutes: true } as const;
const SETTINGS_COLUMNS = sql`name, support_email, reminder_after_minutes`;

const settingsRead = statement<OrganisationSettingsRow, { orgId: string }>(
  SETTINGS_KEYS,
  (p) => sql`select ${SETTINGS_COLUMNS} from organisation where id = ${p.orgId}`,
);

export function organisationSettingsRow(em: EntityManager, orgId: string): Promise<OrganisationSettingsRow | undefined> {
  return settingsRead.first(em, { orgId });
}

const settingsWrite = statement<OrganisationSettingsRow, {
  orgId: string; setSupportEmail: boolean; supportEmail: string | null; setReminder: boolean; minutes: number | null;
}>(
  SETTINGS_KEYS,
  (p) => sql`update organisation
       set support_email = case when ${p.setSupportEmail}::boolean then ${p.supportEmail}::text else support_email end,
           reminder_after_minutes = case when ${p.setReminder}::boolean then ${p.minutes}::integer else reminder_after_minutes end
     where id = ${p.orgId}
     returning ${SETTINGS_COLUMNS}`,
);

/**
 * Writes the settings given (undefined: unchanged) in one statement, so a change is whole or not at
 * all, and answers the settings as they now are. A null delay turns the buyer reminder off (§16).
 */
export async function writeOrganisationSettings(
  em: EntityManager, orgId: string, changes: { supportEmail?: string | null; reminderAfterMinutes?: number | null },
): Promise<OrganisationSettingsRow | undefined> {
  return settingsWrite.first(em, {
    orgId,
    setSupportEmail: changes.supportEmail !== undefined, supportEmail: changes.supportEmail ?? null,
    setReminder: changes.reminderAfterMinutes !== undefined, minutes: changes.reminderAfterMinutes ?? null,
  });
}
