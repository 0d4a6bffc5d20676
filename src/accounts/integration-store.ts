/**
 * Sales platforms' secrets per organisation. Owns `integration` (Settings, Integrations; the
 * sealing of its secrets). The front door's read of an organisation with its integration lives
 * here too.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql, statement, type NoRows, type SqlValue } from '../db/sql';
import { skuMatchesSql, type SkuMatchRow } from '../catalogue/catalogue-store';
import { backlogWaitingOf } from '../outbox/outbox-store';
import { organisationsPaidWith } from '../purchases/purchase-store';

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

/** One stored (sealed or plain) value of an integration: the row and column that hold it. */
export interface StoredIntegrationSecret {
  id: string;
  column: 'secret' | 'private_key';
  stored: string;
}

const unsealedRead = statement<StoredIntegrationSecret, { sealedLike: string }>(
  { id: true, column: true, stored: true },
  (p) => sql`select id, 'secret' as column, secret as stored from integration where secret not like ${p.sealedLike}
     union all select id, 'private_key', private_key from integration where private_key not like ${p.sealedLike}`,
);

/** The integrations' values that do not match `sealedLike` (a LIKE pattern of sealed values). */
export function integrationSecretsNotLike(em: EntityManager, sealedLike: string): Promise<StoredIntegrationSecret[]> {
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

/** Replaces one stored value with `value` if it is still what was read; how many rows changed (0 or 1). */
export function replaceIntegrationSecret(em: EntityManager, secret: StoredIntegrationSecret, value: string): Promise<number> {
  return (secret.column === 'secret' ? secretReseal : privateKeyReseal).run(em, { value, id: secret.id, stored: secret.stored });
}

// ---------------------------------------------------------------------------------------------
// The front door: the organisations a delivery may be for, each with its secrets
// ---------------------------------------------------------------------------------------------

/** An organisation a delivery may be for, with its integration of the platform (or nulls). */
export interface CandidateRow {
  id: string;
  subscription_expires_on: string | null;
  integration_id: string | null;
  secret: string | null;
  private_key: string | null;
  account_id: string | null;
  matches: SkuMatchRow[];
  /** Its live outbox rows, counted up to the cap; null when the query said its count is known. */
  backlog_waiting: number | null;
}

type CandidateParams = { skus: string[]; backlogCap: number; backlogKnown: string[]; platform: string };

/** The candidate read's select, its values given as parameters or as columns of a lookup (below). */
const candidateSelect = (p: { [K in keyof CandidateParams]: SqlValue }) => sql`select o.id, o.subscription_expires_on::text as subscription_expires_on,
  i.id as integration_id, i.secret, i.private_key, i.account_id, ${skuMatchesSql(p.skus, sql`o.id`)} as matches, ${backlogWaitingOf({ cap: p.backlogCap, skip: p.backlogKnown })} as backlog_waiting
  from organisation o left join integration i on i.organisation_id = o.id and i.platform = ${p.platform}`;

const CANDIDATE_COLUMNS = {
  id: true, subscription_expires_on: true, integration_id: true, secret: true, private_key: true, account_id: true, matches: true, backlog_waiting: true,
} as const;

/**
 * The organisations of per-organisation paths, each lookup with its own SKUs and platform, in one
 * statement: `lookups` is a JSON array of {n, org_id, platform, skus, backlog_cap, backlog_known},
 * and each row says by `n` which lookup it answers.
 */
const namedCandidates = statement<CandidateRow & { n: number }, { lookups: string }>(
  { ...CANDIDATE_COLUMNS, n: true },
  (p) => sql`select q.n, c.* from jsonb_to_recordset(${p.lookups}::jsonb)
      as q(n int, org_id uuid, platform text, skus text[], backlog_cap int, backlog_known uuid[])
    cross join lateral (${candidateSelect({ skus: sql`q.skus`, backlogCap: sql`q.backlog_cap`, backlogKnown: sql`q.backlog_known`, platform: sql`q.platform` })}
      where o.id = q.org_id) c`,
);

/** The organisation of a per-organisation path (a UUID) with what the read needs of it. */
export type CandidateLookup = CandidateQuery & { orgId: string };

/**
 * The organisation of each lookup's path, if it exists (a list of none or one per lookup, in their
 * order): one statement for them all, so the front door reads many concurrent deliveries'
 * organisations in one round trip.
 */
export async function candidatesByOrganisation(em: EntityManager, lookups: readonly CandidateLookup[]): Promise<CandidateRow[][]> {
  const json = JSON.stringify(lookups.map((l, n) => ({
    n, org_id: l.orgId, platform: l.platform, skus: l.skus, backlog_cap: l.backlogCap, backlog_known: l.backlogKnown,
  })));
  const answers = lookups.map((): CandidateRow[] => []);
  for (const { n, ...row } of await namedCandidates.rows(em, { lookups: json })) answers[n].push(row);
  return answers;
}

/**
 * Every organisation a shared route's event may be for: the one it names (a UUID, or null), those
 * that registered its account (or null), those that sold with its payment (or null). Bounded.
 */
const sharedRouteCandidates = statement<CandidateRow, CandidateParams & { orgId: string | null; accountId: string | null; paymentReference: string | null }>(
  CANDIDATE_COLUMNS,
  (p) => sql`${candidateSelect(p)} where o.id in (select ${p.orgId}::uuid where ${p.orgId}::uuid is not null
    union (select organisation_id from integration where platform = ${p.platform} and account_id = ${p.accountId} order by updated_at desc limit 10)
    union ${organisationsPaidWith({ source: p.platform, paymentReference: p.paymentReference })})`,
);

/** What the candidate read needs besides the organisations: the SKUs to look up, the backlog cap, the platform. */
export interface CandidateQuery {
  /** Normalised SKUs. */
  skus: string[];
  /** The front door's cap on an organisation's waiting outbox rows: their count stops there. */
  backlogCap: number;
  /** Organisations whose backlog is not counted (the front door knows it): their `backlog_waiting` is null. */
  backlogKnown: string[];
  platform: string;
}

/** The organisations a shared route's event may be for (see sharedRouteCandidates): one prepared statement. */
export function candidatesBySharedRoute(
  em: EntityManager,
  query: CandidateQuery,
  route: { orgId: string | null; accountId: string | null; paymentReference: string | null },
): Promise<CandidateRow[]> {
  return sharedRouteCandidates.rows(em, { ...query, ...route });
}
