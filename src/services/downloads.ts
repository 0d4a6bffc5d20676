import type { EntityManager } from '@mikro-orm/postgresql';
import { organisationVersionFile, versionFiles, type VersionFileRow } from '../catalogue/catalogue-store';
import { downloadLinkExpiry, type DownloadAllowance } from '../domain/download-links';
import { addServedRange, clearServedRanges, reserveCoverageBytes } from '../downloads/download-store';
import { NotFoundError } from '../domain/errors';
import { isUuid } from '../domain/uuid';
import { reminderWorkflowId } from '../domain/ids';
import { enqueueDispatches } from './workflow-outbox';
import { sha256Hex } from '../security/secrets';
import {
  completeLinkSession, extendLink, linkByTokenHash, logFileTransfer, logPageOpen, organisationHasLink, type LinkRow,
} from '../purchases/link-store';

/** Tokens are 43 base64url characters; anything far from that shape is not looked up at all. */
const TOKEN_RE = /^[A-Za-z0-9_-]{16,128}$/;

export type LinkState = 'valid' | 'expired' | 'used';

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
  /** The purchase's license key (decisions §14); null when it has none. */
  licenseKey: string | null;
  /** Its PDFs are served stamped for the buyer (decisions §16). */
  stampPdfs: boolean;
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
  const row = await linkByTokenHash(em, sha256Hex(token));
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
    licenseKey: row.license_key,
    stampPdfs: row.stamp_pdfs,
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
    const opened = await extendLink(tx, link.tokenId, downloadLinkExpiry(now, ttlMs), now);
    if (!opened) return { ...link, state: 'used' };
    await logPageOpen(
      tx, { orgId: link.orgId, purchaseId: link.purchaseId, tokenId: link.tokenId, ip: requester.ip, userAgent: requester.userAgent, now },
      new Date(now.getTime() - PAGE_OPEN_WINDOW_MS),
    );
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
 * go out, unless that would take the purchase past its limit (decisions §10; security review M2):
 * its completed transfers, with those of its other files started and not finished, reach the
 * limit, or the file's bytes pass its budget of limit × file size since the purchase or its last
 * re-arm. Pieces that never complete a file, or a response cut short, still cost their bytes, so no
 * mix of links and ranges gets more than `limit` copies out. Returns false, counting nothing, when
 * over; an unlimited purchase is always let through (its bytes are counted all the same).
 */
export async function reserveBytes(em: EntityManager, link: DownloadLink, file: DownloadFile, range: { start: number; end: number }, now: Date): Promise<boolean> {
  const allowed = link.allowance.allowed;
  const limit = allowed === null ? null : { transfers: allowed, budget: allowed * file.size };
  return reserveCoverageBytes(em, link.purchaseId, file.id, range.end - range.start + 1, limit, now);
}

/**
 * Records that bytes `start`..`end` (inclusive) of a file went out to a link, and writes the ledger
 * entry of a completed transfer (what the downloads report lists) when the bytes served to the
 * link's purchase for that file since its last completed transfer cover the whole file, whichever
 * links served them: repeating one range never counts twice, and a transfer resumed in pieces
 * counts once. The coverage stays coarse: pieces merge, and one that would leave more than
 * MAX_COVERAGE_RANGES separate ranges is left out. The purchase's first completed transfer calls off
 * its waiting reminder (decisions §16) through the outbox. Returns whether it counted. One
 * transaction; the coverage row's lock orders concurrent pieces of one transfer.
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
    const { reminderWaits } = await logFileTransfer(tx, {
      orgId: link.orgId, purchaseId: link.purchaseId, tokenId: link.tokenId, fileId: file.id, bytes: file.size,
      ip: requester.ip, userAgent: requester.userAgent, now,
    });
    if (reminderWaits) {
      const payload = { orgId: link.orgId, purchaseId: link.purchaseId };
      await enqueueDispatches(tx, [{ kind: 'transfer-completed', workflowId: reminderWorkflowId(link.purchaseId), orgId: link.orgId, payload }]);
    }
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
  if (await completeLinkSession(em, { tokenHash: hash, orgId, ip: requester.ip, userAgent: requester.userAgent, now })) return true;
  if (!(await organisationHasLink(em, hash, orgId))) throw new NotFoundError('download token not found');
  return false;
}
