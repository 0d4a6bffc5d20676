import type { EntityManager } from '@mikro-orm/postgresql';
import { Organisation, User } from '../db/entities';
import { ConflictError, NotFoundError, ValidationError } from '../domain/errors';
import { ROLES, type Role } from '../domain/statuses';
import { isUuid } from '../domain/uuid';
import { mintApiKey } from '../security/secrets';
import type { PasswordHasher } from '../security/password-hashing';
import { isEmailAddress, normaliseEmail } from '../domain/email';
import { passwordProblem } from '../security/password-policy';

const DAY_RE = /^\d{4}-\d{2}-\d{2}$/;

/** A YYYY-MM-DD that is a real calendar day. */
export function parseDay(text: string, what: string): string {
  const date = new Date(`${text}T00:00:00Z`);
  if (!DAY_RE.test(text) || Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== text) {
    throw new ValidationError(`${what} must be a date written YYYY-MM-DD`);
  }
  return text;
}

export interface NewUser {
  email: string;
  password: string;
  role: Role;
  name?: string;
}

/** Creates a user with a fresh API key (returned here and never again), in `organisation` or in none. */
async function createUser(
  em: EntityManager,
  passwords: PasswordHasher,
  organisation: Organisation | null,
  input: { email: string; password: string; name?: string; role: Role },
): Promise<{ userId: string; apiKey: string }> {
  const email = normaliseEmail(input.email);
  if (!isEmailAddress(email)) throw new ValidationError('email is not an email address');
  const weak = passwordProblem(input.password);
  if (weak !== null) throw new ValidationError(weak);
  if ((await em.count(User, { email })) > 0) throw new ConflictError('a user with that email already exists');
  const key = mintApiKey();
  const user = em.create(User, {
    organisation,
    email,
    name: input.name?.trim() ?? '',
    role: input.role,
    passwordHash: await passwords.hash(input.password),
    apiKeyHash: key.hash,
    apiKeyPrefix: key.prefix,
  });
  await em.flush();
  return { userId: user.id, apiKey: key.key };
}

/** A user of an organisation, with a fresh API key; the key is returned here and never again. */
export async function addUser(em: EntityManager, passwords: PasswordHasher, orgId: string, input: NewUser): Promise<{ userId: string; apiKey: string }> {
  if (!ROLES.includes(input.role)) throw new ValidationError(`role must be one of ${ROLES.join(', ')}`);
  const org = isUuid(orgId) ? await em.findOne(Organisation, orgId) : null;
  if (!org) throw new NotFoundError('organisation not found');
  return createUser(em, passwords, org, input);
}

/**
 * An operator: a user of no organisation. It cannot use the dashboard or the API (both need an
 * organisation); it signs in only to decode workflow payloads in the Temporal UI (/codec).
 */
export async function addOperator(em: EntityManager, passwords: PasswordHasher, input: { email: string; password: string; name?: string }): Promise<{ userId: string }> {
  const { userId } = await createUser(em, passwords, null, { ...input, role: 'member' });
  return { userId };
}

export interface NewOrganisation {
  name: string;
  ownerEmail: string;
  ownerPassword: string;
  ownerName?: string;
  /** Last valid day (UTC), YYYY-MM-DD; absent = open-ended. */
  subscriptionExpires?: string;
}

export async function createOrganisation(
  em: EntityManager,
  passwords: PasswordHasher,
  input: NewOrganisation,
): Promise<{ orgId: string; userId: string; apiKey: string }> {
  const name = input.name.trim();
  if (!name) throw new ValidationError('name is required');
  return em.transactional(async (tx) => {
    const org = tx.create(Organisation, {
      name,
      subscriptionExpiresOn: input.subscriptionExpires ? parseDay(input.subscriptionExpires, 'subscription expiry') : null,
    });
    await tx.flush();
    const owner = await addUser(tx, passwords, org.id, {
      email: input.ownerEmail, password: input.ownerPassword, role: 'owner', name: input.ownerName,
    });
    return { orgId: org.id, ...owner };
  });
}

export async function setSubscription(
  em: EntityManager,
  orgId: string,
  expires: string,
): Promise<{ orgId: string; subscriptionExpiresAt: string }> {
  const org = isUuid(orgId) ? await em.findOne(Organisation, orgId) : null;
  if (!org) throw new NotFoundError('organisation not found');
  org.subscriptionExpiresOn = parseDay(expires, 'expiry');
  await em.flush();
  return { orgId: org.id, subscriptionExpiresAt: org.subscriptionExpiresOn };
}
