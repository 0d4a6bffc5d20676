/**
 * Download links and what happens to a purchase, as stored. Owns the tables `download_token` (the
 * links) and `activity_log_entry` (page opens, file transfers, download-completes, staff actions).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql, statement, type NoRows } from '../db/sql';

/**
 * The completed file transfers that count toward a purchase's limit (decisions §10): those since
 * the purchase, or since its last re-arm. An SQL expression over the purchase aliased `p`.
 */
export const COUNTED_TRANSFERS = sql`(select count(*) from activity_log_entry a
  where a.purchase_id = p.id and a.kind = 'file_download' and a.created_at > coalesce(p.downloads_counted_from, '-infinity'))`;

// ---------------------------------------------------------------------------------------------
// Staff actions
// ---------------------------------------------------------------------------------------------

/** Who did a staff action, for the activity log: a user, in the dashboard or with their API key. */
export interface StaffActor {
  userId: string;
  via: 'key' | 'session';
}

const staffActionInsert = statement<NoRows, {
  orgId: string; kind: string; purchaseId: string; userId: string; via: string; detail: string | null; now: Date;
}>({}, (p) => sql`insert into activity_log_entry (id, organisation_id, kind, purchase_id, actor, detail, created_at)
  select gen_random_uuid(), ${p.orgId}::uuid, ${p.kind}::text, ${p.purchaseId}::uuid,
    (select email from app_user where id = ${p.userId}::uuid) || ${p.via}::text, ${p.detail}::text, ${p.now}::timestamptz`);

/** A staff action on a purchase, in its activity log (the evidence record lists them). */
export async function logStaffAction(em: EntityManager, purchase: { id: string; organisation_id: string }, kind: 'revoke' | 'restore' | 'rearm' | 'download_limit', actor: StaffActor, detail: string | null, now: Date): Promise<void> {
  await staffActionInsert.run(em, {
    orgId: purchase.organisation_id, kind, purchaseId: purchase.id, userId: actor.userId,
    via: actor.via === 'key' ? ' (API key)' : '', detail, now,
  });
}
