/**
 * Download links and what happens to a purchase, as stored. Owns the tables `download_token` (the
 * links) and `activity_log_entry` (page opens, file transfers, download-completes, staff actions).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { isoUtc, sql, statement, trustedSql, type NoRows, type Parameters } from '../db/sql';
import type { LinkOrigin } from '../domain/evidence';
import { KEY_OF_PURCHASE } from '../licenses/license-store';

/**
 * The completed file transfers that count toward a purchase's limit (decisions §10): those since
 * the purchase, or since its last re-arm. An SQL expression over the purchase aliased `p`.
 */
export const COUNTED_TRANSFERS = sql`(select count(*) from activity_log_entry a
  where a.purchase_id = p.id and a.kind = 'file_download' and a.created_at > coalesce(p.downloads_counted_from, '-infinity'))`;

/** Whether a file transfer of the purchase `p` ever completed (re-arms aside): what calls its reminder off (decisions §16). */
export const EVER_TRANSFERRED = sql`exists (select 1 from activity_log_entry a where a.purchase_id = p.id and a.kind = 'file_download')`;

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
export async function logStaffAction(em: EntityManager, purchase: { id: string; organisation_id: string }, kind: 'revoke' | 'restore' | 'rearm' | 'resend' | 'download_limit', actor: StaffActor, detail: string | null, now: Date): Promise<void> {
  await staffActionInsert.run(em, {
    orgId: purchase.organisation_id, kind, purchaseId: purchase.id, userId: actor.userId,
    via: actor.via === 'key' ? ' (API key)' : '', detail, now,
  });
}

// ---------------------------------------------------------------------------------------------
// Links (download_token)
// ---------------------------------------------------------------------------------------------

const linkInsert = statement<NoRows, { purchaseId: string; tokenHash: string; expiresAt: Date; now: Date; via: LinkOrigin }>(
  {}, (p) => sql`insert into download_token (id, purchase_id, token_hash, expires_at, created_at, issued_via)
       values (gen_random_uuid(), ${p.purchaseId}, ${p.tokenHash}, ${p.expiresAt}, ${p.now}, ${p.via})`,
);

/** Stores a new link of the purchase by its token's hash (the token itself is never stored). */
export async function insertDownloadLink(
  em: EntityManager, link: { purchaseId: string; tokenHash: string; expiresAt: Date; now: Date; via: LinkOrigin },
): Promise<void> {
  await linkInsert.run(em, link);
}

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
  license_key: string | null;
  /** The product's PDFs are stamped for each buyer (decisions §16). */
  stamp_pdfs: boolean;
}

const linkRead = statement<LinkRow, { tokenHash: string }>(
  {
    token_id: true, expires_at: true, used_at: true, purchase_id: true, org_id: true, version_id: true, org_name: true,
    product_name: true, version_label: true, revoked: true, download_limit: true, downloads_used: true, support_email: true,
    license_key: true, stamp_pdfs: true,
  },
  (p) => sql`select t.id as token_id, t.expires_at, t.used_at, p.id as purchase_id, p.organisation_id as org_id,
       v.id as version_id, o.name as org_name, pr.name as product_name, v.version as version_label,
       p.revoked_at is not null as revoked, coalesce(p.download_limit, pr.download_limit) as download_limit,
       o.support_email, ${KEY_OF_PURCHASE} as license_key, pr.stamp_pdfs,
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

const fileTransferInsert = statement<{ reminder_waits: boolean }, Requested & { fileId: string; bytes: number }>(
  { reminder_waits: true },
  // The select sees the table as it was before the insert: `not exists` finds earlier transfers only.
  (p) => sql`with entry as (insert into activity_log_entry (id, organisation_id, kind, purchase_id, token_id, file_id, bytes, ip, user_agent, created_at)
       values (gen_random_uuid(), ${p.orgId}, 'file_download', ${p.purchaseId}, ${p.tokenId}, ${p.fileId}, ${p.bytes}, ${p.ip}, ${p.userAgent}, ${p.now})
       returning purchase_id)
     select coalesce(p.reminder_due_at > ${p.now}, false)
         and not ${EVER_TRANSFERRED} as reminder_waits
       from entry join purchase p on p.id = entry.purchase_id`,
);

/**
 * The ledger entry of a completed file transfer (what the downloads report and the limit count).
 * Answers whether it is the purchase's first while its reminder waits (decisions §16): the
 * reminder is then called off.
 */
export async function logFileTransfer(em: EntityManager, transfer: Requested & { fileId: string; bytes: number }): Promise<{ reminderWaits: boolean }> {
  const row = await fileTransferInsert.first(em, transfer);
  return { reminderWaits: row?.reminder_waits ?? false };
}

// ---------------------------------------------------------------------------------------------
// A purchase's evidence record (decisions §11): its links, accesses and staff actions
// ---------------------------------------------------------------------------------------------

const linksOfPurchaseRead = statement<
  { created_at: string; issued_via: LinkOrigin; expires_at: string; used_at: string | null; total: string | number },
  { purchaseId: string; limit: number }
>(
  { created_at: true, issued_via: true, expires_at: true, used_at: true, total: true },
  (p) => sql`select ${isoUtc('created_at')} as created_at, issued_via, ${isoUtc('expires_at')} as expires_at, ${isoUtc('used_at')} as used_at,
       count(*) over () as total
     from download_token where purchase_id = ${p.purchaseId} order by created_at desc, id desc limit ${p.limit}`,
);

/** The purchase's newest `limit` links, newest first, each with the count of all. */
export function newestLinks(em: EntityManager, purchaseId: string, limit: number) {
  return linksOfPurchaseRead.rows(em, { purchaseId, limit });
}

/** The entries of a link holder's accesses; every other kind is a staff action. */
export const ACCESS_LOG_KINDS = ['page_open', 'file_download', 'download_session'] as const;
export type AccessLogKind = (typeof ACCESS_LOG_KINDS)[number];
/** The access kinds as an SQL list (constants of this module, never input). */
const ACCESS_KINDS_SQL = trustedSql(ACCESS_LOG_KINDS.map((kind) => `'${kind}'`).join(', '));

export interface AccessRow {
  kind: AccessLogKind;
  at: string;
  ip: string | null;
  user_agent: string | null;
  file: string | null;
  bytes: string | number | null;
  occurrences: number;
  /** How many accesses the purchase has in all (every row carries it). */
  total: string | number;
}

const accessesRead = statement<AccessRow, { purchaseId: string; limit: number }>(
  { kind: true, at: true, ip: true, user_agent: true, file: true, bytes: true, occurrences: true, total: true },
  (p) => sql`select a.kind, ${isoUtc('a.created_at')} as at, a.ip, a.user_agent, f.name as file, a.bytes, a.occurrences, count(*) over () as total
     from activity_log_entry a left join version_file f on f.id = a.file_id
     where a.purchase_id = ${p.purchaseId} and a.kind in (${ACCESS_KINDS_SQL})
     order by a.created_at desc, a.id desc limit ${p.limit}`,
);

/** The purchase's newest `limit` accesses, newest first, each with the count of all. */
export function newestAccesses(em: EntityManager, purchaseId: string, limit: number): Promise<AccessRow[]> {
  return accessesRead.rows(em, { purchaseId, limit });
}

const staffActionsRead = statement<{ kind: string; at: string; actor: string | null; detail: string | null }, { purchaseId: string }>(
  { kind: true, at: true, actor: true, detail: true },
  (p) => sql`select a.kind, ${isoUtc('a.created_at')} as at, a.actor, a.detail from activity_log_entry a
     where a.purchase_id = ${p.purchaseId} and a.kind not in (${ACCESS_KINDS_SQL})
     order by a.created_at, a.id`,
);

/** The staff actions on the purchase, oldest first. */
export function staffActionsOf(em: EntityManager, purchaseId: string) {
  return staffActionsRead.rows(em, { purchaseId });
}

// ---------------------------------------------------------------------------------------------
// Completed file transfers: the downloads report, outbound events, the overview
// ---------------------------------------------------------------------------------------------

/** The downloads report's columns, in order (decisions §3, issue 3). */
export const DOWNLOAD_REPORT_COLUMNS = [
  'downloaded_at', 'customer_email', 'customer_name', 'product_id', 'product_name', 'version',
  'purchase_id', 'file_name', 'bytes', 'ip',
] as const;

export type DownloadReportRow = Record<(typeof DOWNLOAD_REPORT_COLUMNS)[number], string | null> & { id: string };

// One row per completed file transfer, oldest first; (created_at, id) is the keyset. The version
// is the downloaded file's, else (file since deleted) the purchased one's.
const REPORT_SELECT = sql`select a.id, ${isoUtc('a.created_at')} as downloaded_at, c.email as customer_email,
    c.name as customer_name, p.product_id, pr.name as product_name, coalesce(fv.version, pv.version) as version,
    a.purchase_id, f.name as file_name, a.bytes::text as bytes, a.ip
  from activity_log_entry a
  join purchase p on p.id = a.purchase_id
  join customer c on c.id = p.customer_id
  join product pr on pr.id = p.product_id
  left join version_file f on f.id = a.file_id
  left join product_version fv on fv.id = f.version_id
  left join product_version pv on pv.id = p.version_id
  where a.organisation_id = `;
const REPORT_KEYS = {
  id: true, downloaded_at: true, customer_email: true, customer_name: true, product_id: true, product_name: true, version: true,
  purchase_id: true, file_name: true, bytes: true, ip: true,
} as const;
interface ReportParams { orgId: string; start: string; end: string; limit: number }
const inRange = (p: Parameters<ReportParams>) => sql`${REPORT_SELECT}${p.orgId} and a.kind = 'file_download'
    and a.created_at >= ${p.start}::timestamptz and a.created_at < ${p.end}::timestamptz`;
const ORDER_BY_TIME = sql` order by a.created_at, a.id limit `;
const reportFirst = statement<DownloadReportRow, ReportParams>(REPORT_KEYS, (p) => sql`${inRange(p)}${ORDER_BY_TIME}${p.limit}`);
const reportAfter = statement<DownloadReportRow, ReportParams & { after: string }>(
  REPORT_KEYS,
  (p) => sql`${inRange(p)} and (a.created_at, a.id) > (select b.created_at, b.id from activity_log_entry b where b.id = ${p.after})${ORDER_BY_TIME}${p.limit}`,
);

/** One batch of the report's rows of [start, end) (ISO instants), after the row `after` (null: from the start). */
export function downloadReportBatch(
  em: EntityManager, orgId: string, range: { start: string; end: string }, after: string | null, limit: number,
): Promise<DownloadReportRow[]> {
  const params = { orgId, start: range.start, end: range.end, limit };
  return after === null ? reportFirst.rows(em, params) : reportAfter.rows(em, { ...params, after });
}

/** A completed file transfer as a `download.completed` event says it (no IP address, no user agent). */
export interface CompletedDownloadRow {
  id: string;
  purchaseId: string;
  productId: string;
  fileId: string | null;
  fileName: string | null;
  bytes: number | null;
  completedAt: string;
}

const completedDownloadsRead = statement<CompletedDownloadRow, { orgId: string; ids: string[] }>(
  { id: true, purchaseId: true, productId: true, fileId: true, fileName: true, bytes: true, completedAt: true },
  (p) => sql`select a.id, a.purchase_id as "purchaseId", p.product_id as "productId", a.file_id as "fileId", f.name as "fileName",
       a.bytes::float8 as bytes, ${isoUtc('a.created_at')} as "completedAt"
     from activity_log_entry a join purchase p on p.id = a.purchase_id left join version_file f on f.id = a.file_id
     where a.organisation_id = ${p.orgId} and a.id = any(${p.ids}::uuid[])`,
);

/** The organisation's completed file transfers of these ids (entry ids), in no particular order. */
export function completedDownloads(em: EntityManager, orgId: string, ids: string[]): Promise<CompletedDownloadRow[]> {
  return completedDownloadsRead.rows(em, { orgId, ids });
}

const transfersPerDayRead = statement<{ day: string; n: string }, { orgId: string; since: Date }>(
  { day: true, n: true },
  (p) => sql`select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as day, count(*) as n
       from activity_log_entry where organisation_id = ${p.orgId} and created_at >= ${p.since} and kind = 'file_download' group by 1`,
);

/** Completed file transfers per UTC day since `since` (days without any are left out). */
export function transfersPerDay(em: EntityManager, orgId: string, since: Date): Promise<Array<{ day: string; n: string }>> {
  return transfersPerDayRead.rows(em, { orgId, since });
}
