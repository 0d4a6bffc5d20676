import type { EntityManager } from '@mikro-orm/postgresql';
import { organisationVersionFile, versionFiles, type VersionFileRow } from '../catalogue/catalogue-store';
import { downloadLinkExpiry, type DownloadAllowance } from '../domain/download-links';
import { addServedRange, clearServedRanges, reserveCoverageBytes } from '../downloads/download-store';
import { NotFoundError } from '../domain/errors';
import { isUuid } from '../domain/uuid';
import { sha256Hex } from '../security/secrets';

/** Tokens are 43 base64url characters; anything far from that shape is not looked up at all. */
const TOKEN_RE = /^[A-Za-z0-9_-]{16,128}$/;

export type LinkState = 'valid' | 'expired' | 'used';

/**
 * The completed file transfers that count toward a purchase's limit (decisions §10): those since
 * the purchase, or since its last re-arm. An SQL expression over the purchase aliased `p`.
 */
export const COUNTED_TRANSFERS_SQL = `(select count(*) from activity_log_entry a
  where a.purchase_id = p.id and a.kind = 'file_download' and a.created_at > coalesce(p.downloads_counted_from, '-infinity'))`;

/** A download link as the customer pages see it: the token's row with its purchase's context. */
export interface DownloadLink {
  tokenId: string;
  purchaseId: string;
  orgId: string;
  /** The purchased version; null when it has since been deleted. */
  versionId: string | null;
  orgName: string;
  productName: string;
  versionLabel: string | null;
  expiresAt: Date;
  state: LinkState;
  /** Access withdrawn (refund, chargeback, by hand): the link and its files answer 410 whatever its state. */
  revoked: boolean;
  allowance: DownloadAllowance;
  /** The seller's support address, shown when the limit is reached; null when none is set. */
  supportEmail: string | null;
}

export interface DownloadFile {
  id: string;
  name: string;
  size: number;
  sha256: string;
  storageKey: string;
  contentType: string;
  createdAt: Date;
}

/** Who made a request, for the activity log. */
export interface Requester {
  ip: string;
  userAgent: string | null;
}

interface LinkRow {
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

function stateOf(row: LinkRow, now: Date): LinkState {
  if (row.used_at !== null) return 'used';
  return new Date(row.expires_at).getTime() <= now.getTime() ? 'expired' : 'valid';
}

function toFile(row: VersionFileRow): DownloadFile {
  return {
    id: row.id,
    name: row.name,
    size: Number(row.size),
    sha256: row.sha256,
    storageKey: row.storage_key,
    contentType: row.content_type,
    createdAt: new Date(row.created_at),
  };
}

/** Looks a token up by its hash only; null when it is unknown (or not even shaped like a token). */
export async function findDownloadLink(em: EntityManager, token: string, now: Date): Promise<DownloadLink | null> {
  if (!TOKEN_RE.test(token)) return null;
  const [row] = await em.execute<LinkRow[]>(
    `select t.id as token_id, t.expires_at, t.used_at, p.id as purchase_id, p.organisation_id as org_id,
       v.id as version_id, o.name as org_name, pr.name as product_name, v.version as version_label,
       p.revoked_at is not null as revoked, coalesce(p.download_limit, pr.download_limit) as download_limit,
       o.support_email,
       case when coalesce(p.download_limit, pr.download_limit) is null then 0 else ${COUNTED_TRANSFERS_SQL} end as downloads_used
     from download_token t
     join purchase p on p.id = t.purchase_id
     join organisation o on o.id = p.organisation_id
     join product pr on pr.id = p.product_id and pr.organisation_id = p.organisation_id
     left join product_version v on v.id = p.version_id and v.product_id = pr.id
     where t.token_hash = ?`,
    [sha256Hex(token)],
  );
  if (!row) return null;
  return {
    tokenId: row.token_id,
    purchaseId: row.purchase_id,
    orgId: row.org_id,
    versionId: row.version_id,
    orgName: row.org_name,
    productName: row.product_name,
    versionLabel: row.version_label,
    expiresAt: new Date(row.expires_at),
    state: stateOf(row, now),
    revoked: row.revoked,
    allowance: { allowed: row.download_limit, used: Number(row.downloads_used) },
    supportEmail: row.support_email,
  };
}

/** Page opens of one link this close together are one activity entry with a count (security review M3). */
export const PAGE_OPEN_WINDOW_MS = 60_000;

/**
 * Opening a valid link moves its expiry to a link lifetime from now (decisions §6) and is a page
 * open in the purchase's activity (the dispute evidence lists them): a new entry, or one more on
 * the link's entry of the last minute, so reloading a page cannot add rows without bound. One
 * transaction; the token's row lock orders concurrent opens of one link, so the second finds the
 * first's entry. Returns the link as it now stands: a link used or expired meanwhile is returned
 * in that state, unchanged.
 */
export async function openDownloadLink(em: EntityManager, link: DownloadLink, requester: Requester, now: Date, ttlMs: number): Promise<DownloadLink> {
  if (link.state !== 'valid' || link.revoked) return link;
  return em.transactional(async (tx) => {
    const [opened] = await tx.execute<Array<{ expires_at: Date | string }>>(
      'update download_token set expires_at = ? where id = ? and used_at is null and expires_at > ? returning expires_at',
      [downloadLinkExpiry(now, ttlMs), link.tokenId, now],
    );
    if (!opened) return { ...link, state: 'used' };
    const repeated = await tx.execute<Array<{ id: string }>>(
      `update activity_log_entry set occurrences = occurrences + 1
       where purchase_id = ? and kind = 'page_open' and token_id = ? and created_at > ? returning id`,
      [link.purchaseId, link.tokenId, new Date(now.getTime() - PAGE_OPEN_WINDOW_MS)],
    );
    if (repeated.length === 0) {
      await tx.execute(
        `insert into activity_log_entry (id, organisation_id, kind, purchase_id, token_id, ip, user_agent, created_at)
         values (gen_random_uuid(), ?, 'page_open', ?, ?, ?, ?, ?)`,
        [link.orgId, link.purchaseId, link.tokenId, requester.ip, requester.userAgent, now],
      );
    }
    return { ...link, expiresAt: new Date(opened.expires_at) };
  });
}

/** The files of the link's purchased version, in a stable order. */
export async function listLinkFiles(em: EntityManager, link: DownloadLink): Promise<DownloadFile[]> {
  if (!link.versionId) return [];
  return (await versionFiles(em, link.versionId)).map(toFile);
}

/**
 * One file of the link's purchased version, found by id only, and only within that version of
 * that organisation's product: any other id (another product's file, a made-up one) is null.
 */
export async function findLinkFile(em: EntityManager, link: DownloadLink, fileId: string): Promise<DownloadFile | null> {
  if (!link.versionId || !isUuid(fileId)) return null;
  const row = await organisationVersionFile(em, link.orgId, link.versionId, fileId);
  return row ? toFile(row) : null;
}

/**
 * Counts the bytes `start`..`end` (inclusive) of a file as sent to the link's purchase before they
 * go out, unless that would take the purchase past its byte budget: download limit × file size
 * since the purchase or its last re-arm (decisions §10; security review M2). Pieces that never
 * complete a file, or a response cut short, still cost their bytes, so no mix of links and ranges
 * gets more than `limit` copies out. Returns false, counting nothing, when over the budget; an
 * unlimited purchase is always let through (its bytes are counted all the same).
 */
export async function reserveBytes(em: EntityManager, link: DownloadLink, file: DownloadFile, range: { start: number; end: number }, now: Date): Promise<boolean> {
  const budget = link.allowance.allowed === null ? null : link.allowance.allowed * file.size;
  return reserveCoverageBytes(em, link.purchaseId, file.id, range.end - range.start + 1, budget, now);
}

/**
 * Records that bytes `start`..`end` (inclusive) of a file went out to a link, and writes the ledger
 * entry of a completed transfer (what the downloads report lists) when the bytes served to the
 * link's purchase for that file since its last completed transfer cover the whole file, whichever
 * links served them: repeating one range never counts twice, and a transfer resumed in pieces
 * counts once. The coverage stays coarse: pieces merge, and one that would leave more than
 * MAX_COVERAGE_RANGES separate ranges is left out. Returns whether it counted. One transaction; the
 * coverage row's lock orders concurrent pieces of one transfer.
 */
export async function recordBytesServed(
  em: EntityManager,
  link: DownloadLink,
  file: DownloadFile,
  range: { start: number; end: number },
  requester: Requester,
  now: Date,
): Promise<boolean> {
  return em.transactional(async (tx) => {
    if (!(await addServedRange(tx, link.purchaseId, file.id, range, file.size, now))) return false;
    await clearServedRanges(tx, link.purchaseId, file.id);
    await tx.execute(
      `insert into activity_log_entry (id, organisation_id, kind, purchase_id, token_id, file_id, bytes, ip, user_agent, created_at)
       values (gen_random_uuid(), ?, 'file_download', ?, ?, ?, ?, ?, ?, ?)`,
      [link.orgId, link.purchaseId, link.tokenId, file.id, file.size, requester.ip, requester.userAgent, now],
    );
    return true;
  });
}

/**
 * download-complete (decisions §4): marks the token used and writes a session entry, in one
 * statement, once: a second call (even a concurrent one) changes nothing and answers `false`.
 * A token that is unknown or belongs to another organisation is not found.
 */
export async function completeDownloadSession(
  em: EntityManager,
  orgId: string,
  token: string,
  requester: Requester,
  now: Date,
): Promise<boolean> {
  if (!isUuid(orgId) || !TOKEN_RE.test(token)) throw new NotFoundError('download token not found');
  const hash = sha256Hex(token);
  const written = await em.execute<Array<{ id: string }>>(
    `with used as (
       update download_token t set used_at = ?
       from purchase p
       where t.token_hash = ? and p.id = t.purchase_id and p.organisation_id = ? and t.used_at is null
       returning t.id, t.purchase_id, p.organisation_id)
     insert into activity_log_entry (id, organisation_id, kind, purchase_id, token_id, ip, user_agent, created_at)
     select gen_random_uuid(), organisation_id, 'download_session', purchase_id, id, ?, ?, ? from used
     returning id`,
    [now, hash, orgId, requester.ip, requester.userAgent, now],
  );
  if (written.length > 0) return true;
  const [known] = await em.execute<Array<{ id: string }>>(
    `select t.id from download_token t join purchase p on p.id = t.purchase_id
     where t.token_hash = ? and p.organisation_id = ?`,
    [hash, orgId],
  );
  if (!known) throw new NotFoundError('download token not found');
  return false;
}
