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

// ---------------------------------------------------------------------------------------------
// Links (download_token)
// ---------------------------------------------------------------------------------------------

/** A download link as stored, with its purchase's context (the customer pages' view of it). */
export interface LinkRow {
  token_id: string;
  expires_at: Date | string;
  used_at: Date | string | null;
  purchase_id: string;
  org_id: string;
  version_id: string | null;
  org_name: string;
  product_name: string;
  version_label: string | null;
  revoked: boolean;
  download_limit: number | null;
  downloads_used: string | number;
  support_email: string | null;
}

const linkRead = statement<LinkRow, { tokenHash: string }>(
  {
    token_id: true, expires_at: true, used_at: true, purchase_id: true, org_id: true, version_id: true, org_name: true,
    product_name: true, version_label: true, revoked: true, download_limit: true, downloads_used: true, support_email: true,
  },
  (p) => sql`select t.id as token_id, t.expires_at, t.used_at, p.id as purchase_id, p.organisation_id as org_id,
       v.id as version_id, o.name as org_name, pr.name as product_name, v.version as version_label,
       p.revoked_at is not null as revoked, coalesce(p.download_limit, pr.download_limit) as download_limit,
       o.support_email,
       case when coalesce(p.download_limit, pr.download_limit) is null then 0 else ${COUNTED_TRANSFERS} end as downloads_used
     from download_token t
     join purchase p on p.id = t.purchase_id
     join organisation o on o.id = p.organisation_id
     join product pr on pr.id = p.product_id and pr.organisation_id = p.organisation_id
     left join product_version v on v.id = p.version_id and v.product_id = pr.id
     where t.token_hash = ${p.tokenHash}`,
);

/** The link whose token has this hash, or undefined. */
export function linkByTokenHash(em: EntityManager, tokenHash: string): Promise<LinkRow | undefined> {
  return linkRead.first(em, { tokenHash });
}

const linkExtend = statement<{ expires_at: Date | string }, { tokenId: string; expiresAt: Date; now: Date }>(
  { expires_at: true },
  (p) => sql`update download_token set expires_at = ${p.expiresAt} where id = ${p.tokenId} and used_at is null and expires_at > ${p.now}
    returning expires_at`,
);

/** Moves a valid link's expiry to `expiresAt`; undefined when it is used or expired (nothing changes then). */
export function extendLink(em: EntityManager, tokenId: string, expiresAt: Date, now: Date): Promise<{ expires_at: Date | string } | undefined> {
  return linkExtend.first(em, { tokenId, expiresAt, now });
}

const openLinksExpire = statement<NoRows, { purchaseId: string; now: Date }>(
  {}, (p) => sql`update download_token set expires_at = ${p.now} where purchase_id = ${p.purchaseId} and used_at is null and expires_at > ${p.now}`,
);

/** Every open link of the purchase stops working now (re-arm). */
export async function expireOpenLinks(em: EntityManager, purchaseId: string, now: Date): Promise<void> {
  await openLinksExpire.run(em, { purchaseId, now });
}

/** An access to log: the link's purchase and token, who asked, when. */
interface Requested {
  orgId: string;
  purchaseId: string;
  tokenId: string;
  ip: string;
  userAgent: string | null;
  now: Date;
}

const sessionComplete = statement<{ id: string }, { tokenHash: string; orgId: string; ip: string; userAgent: string | null; now: Date }>(
  { id: true },
  (p) => sql`with used as (
       update download_token t set used_at = ${p.now}
       from purchase p
       where t.token_hash = ${p.tokenHash} and p.id = t.purchase_id and p.organisation_id = ${p.orgId} and t.used_at is null
       returning t.id, t.purchase_id, p.organisation_id)
     insert into activity_log_entry (id, organisation_id, kind, purchase_id, token_id, ip, user_agent, created_at)
     select gen_random_uuid(), organisation_id, 'download_session', purchase_id, id, ${p.ip}::text, ${p.userAgent}::text, ${p.now}::timestamptz
     from used
     returning id`,
);

/**
 * Marks the organisation's link of this token hash used and logs the download session, in one
 * statement, once: false when it is used already (or unknown).
 */
export async function completeLinkSession(em: EntityManager, params: Omit<Requested, 'purchaseId' | 'tokenId'> & { tokenHash: string }): Promise<boolean> {
  return (await sessionComplete.rows(em, params)).length > 0;
}

const organisationLinkRead = statement<{ id: string }, { tokenHash: string; orgId: string }>(
  { id: true },
  (p) => sql`select t.id from download_token t join purchase p on p.id = t.purchase_id
     where t.token_hash = ${p.tokenHash} and p.organisation_id = ${p.orgId}`,
);

/** Whether the organisation has a link of this token hash. */
export async function organisationHasLink(em: EntityManager, tokenHash: string, orgId: string): Promise<boolean> {
  return (await organisationLinkRead.first(em, { tokenHash, orgId })) !== undefined;
}

// ---------------------------------------------------------------------------------------------
// Accesses (activity_log_entry): page opens, file transfers
// ---------------------------------------------------------------------------------------------

const pageOpenRepeat = statement<{ id: string }, { purchaseId: string; tokenId: string; since: Date }>(
  { id: true },
  (p) => sql`update activity_log_entry set occurrences = occurrences + 1
       where purchase_id = ${p.purchaseId} and kind = 'page_open' and token_id = ${p.tokenId} and created_at > ${p.since} returning id`,
);
const pageOpenInsert = statement<NoRows, Requested>(
  {},
  (p) => sql`insert into activity_log_entry (id, organisation_id, kind, purchase_id, token_id, ip, user_agent, created_at)
         values (gen_random_uuid(), ${p.orgId}, 'page_open', ${p.purchaseId}, ${p.tokenId}, ${p.ip}, ${p.userAgent}, ${p.now})`,
);

/**
 * A page open of a link: one more on the link's entry since `since`, else a new entry. The
 * caller holds the token's row lock, so concurrent opens of one link find each other's entry.
 */
export async function logPageOpen(em: EntityManager, open: Requested, since: Date): Promise<void> {
  const repeated = await pageOpenRepeat.rows(em, { purchaseId: open.purchaseId, tokenId: open.tokenId, since });
  if (repeated.length === 0) await pageOpenInsert.run(em, open);
}

const fileTransferInsert = statement<NoRows, Requested & { fileId: string; bytes: number }>(
  {},
  (p) => sql`insert into activity_log_entry (id, organisation_id, kind, purchase_id, token_id, file_id, bytes, ip, user_agent, created_at)
       values (gen_random_uuid(), ${p.orgId}, 'file_download', ${p.purchaseId}, ${p.tokenId}, ${p.fileId}, ${p.bytes}, ${p.ip}, ${p.userAgent}, ${p.now})`,
);

/** The ledger entry of a completed file transfer (what the downloads report and the limit count). */
export async function logFileTransfer(em: EntityManager, transfer: Requested & { fileId: string; bytes: number }): Promise<void> {
  await fileTransferInsert.run(em, transfer);
}
