/**
 * Missed-webhook reconciliation's settings and progress (decisions §15): owns
 * `integration_reconciliation`, one row per organisation and platform with the sealed read-only
 * credentials, the API origin, the pause a refusal caused, the high-water mark and the last result.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { isoUtc, sql, statement, type NoRows } from '../db/sql';
import type { Platform } from '../domain/platforms';
import type { ReconcileResult } from '../domain/reconciliation';

/** A stored reconciliation, times as ISO strings. */
export interface ReconciliationRow {
  enabled: boolean;
  api_base_url: string;
  /** Sealed JSON of the platform's credentials. */
  credentials: string;
  paused_at: string | null;
  paused_reason: string | null;
  high_water_mark: string | null;
  last_run_at: string | null;
  last_result: ReconcileResult | null;
  /** When the settings (the credentials) were last saved. */
  updated_at: string;
}

const read = statement<ReconciliationRow, { orgId: string; platform: string }>(
  {
    enabled: true, api_base_url: true, credentials: true, paused_at: true, paused_reason: true, high_water_mark: true, last_run_at: true,
    last_result: true, updated_at: true,
  },
  (p) => sql`select enabled, api_base_url, credentials, ${isoUtc('paused_at')} as paused_at, paused_reason,
       ${isoUtc('high_water_mark')} as high_water_mark, ${isoUtc('last_run_at')} as last_run_at, last_result,
       ${isoUtc('updated_at')} as updated_at
     from integration_reconciliation where organisation_id = ${p.orgId} and platform = ${p.platform}`,
);

export function reconciliationOf(em: EntityManager, orgId: string, platform: Platform): Promise<ReconciliationRow | undefined> {
  return read.first(em, { orgId, platform });
}

const save = statement<NoRows, { orgId: string; platform: string; enabled: boolean; apiBaseUrl: string; credentials: string; now: Date }>(
  {},
  (p) => sql`insert into integration_reconciliation (organisation_id, platform, enabled, api_base_url, credentials, updated_at)
     values (${p.orgId}, ${p.platform}, ${p.enabled}, ${p.apiBaseUrl}, ${p.credentials}, ${p.now})
     on conflict (organisation_id, platform) do update set enabled = excluded.enabled, api_base_url = excluded.api_base_url,
       credentials = excluded.credentials, paused_at = null, paused_reason = null, updated_at = excluded.updated_at`,
);

/** Saves the settings; saving lifts a pause (the seller has given the credentials again). */
export async function saveReconciliation(
  em: EntityManager, row: { orgId: string; platform: Platform; enabled: boolean; apiBaseUrl: string; credentials: string; now: Date },
): Promise<void> {
  await save.run(em, row);
}

const enabledRead = statement<{ organisation_id: string; platform: Platform }>(
  { organisation_id: true, platform: true },
  () => sql`select organisation_id, platform from integration_reconciliation where enabled`,
);

/** Every enabled reconciliation (each has a schedule, running or paused). */
export function enabledReconciliations(em: EntityManager): Promise<Array<{ organisation_id: string; platform: Platform }>> {
  return enabledRead.rows(em, {});
}

/** One organisation's stored (sealed or plain) credentials for a platform. */
export interface StoredCredentials {
  organisation_id: string;
  platform: Platform;
  stored: string;
}

const unsealedRead = statement<StoredCredentials, { sealedLike: string }>(
  { organisation_id: true, platform: true, stored: true },
  (p) => sql`select organisation_id, platform, credentials as stored from integration_reconciliation where credentials not like ${p.sealedLike}`,
);

/** The credentials that do not match `sealedLike` (a LIKE pattern of sealed values). */
export function credentialsNotLike(em: EntityManager, sealedLike: string): Promise<StoredCredentials[]> {
  return unsealedRead.rows(em, { sealedLike });
}

// `updated_at` stays: it names the credentials a refusal pauses (pauseReconciliation), and sealed
// again they are the same credentials, so a run's refusal of them must still pause them.
const credentialsReseal = statement<NoRows, { value: string; orgId: string; platform: string; stored: string }>(
  {},
  (p) => sql`update integration_reconciliation set credentials = ${p.value}
     where organisation_id = ${p.orgId} and platform = ${p.platform} and credentials = ${p.stored}`,
);

/** Replaces stored credentials with `value` if they are still what was read; how many rows changed (0 or 1). */
export function replaceCredentials(em: EntityManager, credentials: StoredCredentials, value: string): Promise<number> {
  return credentialsReseal.run(em, { value, orgId: credentials.organisation_id, platform: credentials.platform, stored: credentials.stored });
}

const refuse = statement<{ paused_at: string; newly: boolean }, { orgId: string; platform: string; reason: string; now: Date; savedAt: string }>(
  { paused_at: true, newly: true },
  (p) => sql`update integration_reconciliation r set paused_at = coalesce(r.paused_at, ${p.now}), paused_reason = coalesce(r.paused_reason, ${p.reason})
     from (select paused_at is null as newly from integration_reconciliation where organisation_id = ${p.orgId} and platform = ${p.platform} for update) before
     where r.organisation_id = ${p.orgId} and r.platform = ${p.platform}
       and ${isoUtc('r.updated_at')} = ${p.savedAt}
     returning ${isoUtc('r.paused_at')} as paused_at, before.newly`,
);

/**
 * Marks the credentials saved at `savedAt` refused: the first refusal stamps the pause, later ones
 * keep it. Answers when the pause began (the refusal email's once-key) and whether this call began it;
 * undefined without a row, or when credentials were saved since (a refusal of the old ones, or a
 * retried one, must not pause the new).
 */
export function pauseReconciliation(
  em: EntityManager, pause: { orgId: string; platform: Platform; reason: string; now: Date; savedAt: string },
): Promise<{ paused_at: string; newly: boolean } | undefined> {
  return refuse.first(em, pause);
}

const finish = statement<NoRows, { orgId: string; platform: string; at: Date; result: string; mark: string | null }>(
  {},
  // greatest() skips a null: no mark leaves it as it is.
  (p) => sql`update integration_reconciliation set last_run_at = ${p.at}, last_result = ${p.result}::jsonb,
       high_water_mark = greatest(high_water_mark, ${p.mark}::timestamptz)
     where organisation_id = ${p.orgId} and platform = ${p.platform}`,
);

/**
 * A run's end: when, what it found, and the high-water mark moved up to `newestChange` (never down;
 * null leaves it), the orders it covers all recorded.
 */
export async function recordRunResult(
  em: EntityManager, orgId: string, platform: Platform, run: { at: Date; result: ReconcileResult; newestChange: string | null },
): Promise<void> {
  await finish.run(em, { orgId, platform, at: run.at, result: JSON.stringify(run.result), mark: run.newestChange });
}
