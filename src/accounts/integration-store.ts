/**
 * Sales platforms' secrets per organisation. Owns `integration` (Settings, Integrations; the
 * sealing of its secrets). The front door's read of an organisation with its integration lives
 * here too.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql, statement, type NoRows } from '../db/sql';

const configuredRead = statement<{ platform: string }, { orgId: string }>(
  { platform: true },
  (p) => sql`select platform from integration
     where organisation_id = ${p.orgId} and (coalesce(secret, '') <> '' or coalesce(private_key, '') <> '')`,
);

/** The platforms with a secret (or private key) set for the organisation. */
export async function configuredPlatforms(em: EntityManager, orgId: string): Promise<string[]> {
  return (await configuredRead.rows(em, { orgId })).map((r) => r.platform);
}

/** A platform's stored values, sealed; `accountId` undefined keeps the stored one. */
export interface IntegrationWrite {
  orgId: string;
  platform: string;
  secret: string | null;
  privateKey: string | null;
  accountId: string | null | undefined;
}

const upsert = statement<NoRows, { orgId: string; platform: string; secret: string | null; privateKey: string | null; accountId: string | null; setAccount: boolean }>(
  {},
  (p) => sql`insert into integration (id, organisation_id, platform, secret, private_key, account_id, updated_at)
     values (gen_random_uuid(), ${p.orgId}, ${p.platform}, ${p.secret}, ${p.privateKey}, ${p.accountId}, now())
     on conflict (organisation_id, platform) do update set
       secret = excluded.secret, private_key = excluded.private_key,
       account_id = case when ${p.setAccount} then excluded.account_id else integration.account_id end,
       updated_at = now()`,
);

/** Sets a platform's secrets (upsert on organisation + platform). */
export async function upsertIntegration(em: EntityManager, write: IntegrationWrite): Promise<void> {
  await upsert.run(em, {
    orgId: write.orgId, platform: write.platform, secret: write.secret, privateKey: write.privateKey,
    accountId: write.accountId ?? null, setAccount: write.accountId !== undefined,
  });
}

/** An integration's stored (sealed or plain) values. */
export interface IntegrationSecretsRow {
  id: string;
  secret: string | null;
  private_key: string | null;
}

const unsealedRead = statement<IntegrationSecretsRow, { sealedLike: string }>(
  { id: true, secret: true, private_key: true },
  (p) => sql`select id, secret, private_key from integration where secret not like ${p.sealedLike} or private_key not like ${p.sealedLike}`,
);

/** The integrations with a value that does not match `sealedLike` (a LIKE pattern of sealed values). */
export function integrationsNotLike(em: EntityManager, sealedLike: string): Promise<IntegrationSecretsRow[]> {
  return unsealedRead.rows(em, { sealedLike });
}

const secretReseal = statement<NoRows, { value: string; id: string; stored: string }>(
  {},
  (p) => sql`update integration set secret = ${p.value} where id = ${p.id} and secret = ${p.stored}`,
);
const privateKeyReseal = statement<NoRows, { value: string; id: string; stored: string }>(
  {},
  (p) => sql`update integration set private_key = ${p.value} where id = ${p.id} and private_key = ${p.stored}`,
);

/** Replaces one stored value if it is still `stored`; how many rows changed (0 or 1). */
export function replaceIntegrationValue(
  em: EntityManager, column: 'secret' | 'private_key', id: string, stored: string, value: string,
): Promise<number> {
  return (column === 'secret' ? secretReseal : privateKeyReseal).run(em, { value, id, stored });
}
