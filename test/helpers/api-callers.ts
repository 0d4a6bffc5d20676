import { User } from '../../src/db/entities';
import type { Harness } from './harness';
import { seedOrganisation, seedUser } from './seed';

/** Bearer headers for every kind of caller the error table distinguishes. */
export interface ApiCallers {
  orgId: string;
  owner: Record<string, string>;
  member: Record<string, string>;
  /** Owner of another organisation, for isolation tests. */
  otherOrgId: string;
  other: Record<string, string>;
  /** Owner of an organisation whose subscription ended yesterday or earlier → 403. */
  expired: Record<string, string>;
  /** A user whose organisation was taken away → 403. */
  noOrg: Record<string, string>;
}

const bearer = (apiKey: string) => ({ authorization: `Bearer ${apiKey}` });

export async function seedCallers(h: Harness): Promise<ApiCallers> {
  const org = await seedOrganisation(h);
  const member = await seedUser(h, org.orgId, 'member');
  const other = await seedOrganisation(h);
  const expired = await seedOrganisation(h, { subscriptionExpires: '2020-01-31' });
  const orphan = await seedUser(h, other.orgId, 'admin');
  await h.orm.em.fork().nativeUpdate(User, { id: orphan.userId }, { organisation: null });
  return {
    orgId: org.orgId,
    owner: bearer(org.apiKey),
    member: bearer(member.apiKey),
    otherOrgId: other.orgId,
    other: bearer(other.apiKey),
    expired: bearer(expired.apiKey),
    noOrg: bearer(orphan.apiKey),
  };
}

/** The auth rows of the error table (401 missing/invalid key, 403 expired/no organisation). */
export const AUTH_FAILURES: Array<[string, number, (c: ApiCallers) => Record<string, string>]> = [
  ['no key', 401, () => ({})],
  ['an invalid Bearer key', 401, () => ({ authorization: 'Bearer not-a-key' })],
  ['an invalid X-API-Key', 401, () => ({ 'x-api-key': 'not-a-key' })],
  ['an expired subscription', 403, (c) => c.expired],
  ['a user with no organisation', 403, (c) => c.noOrg],
];
