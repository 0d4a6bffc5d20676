import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import { isPdfFile, MAX_STAMPED_PDF_BYTES, pdfStampOf } from '../domain/pdf-stamp';
import { UnprocessableError } from '../domain/errors';
import { recordStampedCopy, stampedCopyOf, type StampedCopyRow } from '../downloads/stamped-copy-store';
import { assertStampableOffThread, stampPdfOffThread } from '../downloads/pdf-stamping';
import { purchaseBuyer } from '../purchases/purchase-store';
import { ObjectNotFoundError, type FileStorage } from '../storage/file-storage';
import type { DownloadFile, DownloadLink } from './downloads';

/** The file a request is served, and whether its stamped copy was made for this request. */
export interface ServedFile {
  file: DownloadFile;
  madeCopy: boolean;
}

/** Copies being made in this process, by purchase and file: a second first request waits for the first's. */
const making = new Map<string, Promise<{ copy: StampedCopyRow; recorded: boolean }>>();

/**
 * What a link's file request is served (decisions §16): the stored file itself, or, for a PDF of a
 * product that stamps, the purchase's stamped copy, made on its first request and kept in the file
 * storage. Either way the bytes are checked to be there with their recorded size. A copy is made
 * without a database connection held (stamping a book takes seconds): first requests of many buyers
 * at once must not take the pool from every other request.
 */
export async function servedFile(em: EntityManager, storage: FileStorage, link: DownloadLink, file: DownloadFile, now: Date): Promise<ServedFile> {
  if (!(link.stampPdfs && isPdfFile(file))) {
    const stored = await storage.stat(file.storageKey);
    if (stored.size !== file.size) throw new Error(`stored size of file ${file.id} differs from its record`);
    return { file, madeCopy: false };
  }
  const known = await stampedCopyOf(em, link.purchaseId, file.id);
  if (known && (await holds(storage, known))) return { file: asServed(file, known), madeCopy: false };
  const key = `${link.purchaseId}/${file.id}`;
  const underWay = making.get(key);
  if (underWay) return { file: asServed(file, (await underWay).copy), madeCopy: false };
  const made = makeStampedCopy(em, storage, link, file, known?.storage_key ?? null, now);
  making.set(key, made);
  try {
    const { copy, recorded } = await made;
    return { file: asServed(file, copy), madeCopy: recorded };
  } finally {
    making.delete(key);
  }
}

/** The stamped copy's bytes are still in the storage (a storage move, say, leaves the record behind). */
async function holds(storage: FileStorage, copy: StampedCopyRow): Promise<boolean> {
  try {
    return (await storage.stat(copy.storage_key)).size === Number(copy.size);
  } catch (error) {
    if (error instanceof ObjectNotFoundError) return false;
    throw error;
  }
}

function asServed(file: DownloadFile, copy: StampedCopyRow): DownloadFile {
  return { ...file, storageKey: copy.storage_key, size: Number(copy.size), sha256: copy.sha256, createdAt: new Date(copy.created_at) };
}

/**
 * Stamps the file for the purchase, stores the copy under a key of its own (ids and a random part,
 * nothing personal) and records it in place of `replacing` (a copy whose bytes went missing), or
 * none. Another process's copy of the same moment may be recorded first: this one is then removed
 * and that one served (`recorded` false).
 */
async function makeStampedCopy(
  em: EntityManager, storage: FileStorage, link: DownloadLink, file: DownloadFile, replacing: string | null, now: Date,
): Promise<{ copy: StampedCopyRow; recorded: boolean }> {
  const buyer = await purchaseBuyer(em, link.orgId, link.purchaseId);
  if (!buyer) throw new Error(`purchase ${link.purchaseId} of a download link is gone`);
  const stamp = pdfStampOf({ purchaseId: link.purchaseId, email: buyer.email, orderId: buyer.orderId });
  const stamped = await stampPdfOffThread(await readWhole(storage, file), stamp);
  const storageKey = `stamped/${link.purchaseId}/${file.id}-${randomUUID()}`;
  const put = await storage.put(storageKey, Readable.from([Buffer.from(stamped.buffer, stamped.byteOffset, stamped.byteLength)]), Number.MAX_SAFE_INTEGER);
  const copy = { purchaseId: link.purchaseId, fileId: file.id, storageKey, size: put.size, sha256: put.sha256 };
  const recorded = await recordStampedCopy(em, copy, replacing, now);
  if (recorded) {
    if (replacing !== null) await storage.delete(replacing);
    return { copy: recorded, recorded: true };
  }
  await storage.delete(storageKey);
  const theirs = await stampedCopyOf(em, link.purchaseId, file.id);
  if (!theirs) throw new Error(`the stamped copy of file ${file.id} for purchase ${link.purchaseId} was recorded and is gone`);
  return { copy: theirs, recorded: false };
}

/**
 * A stored file's bytes in one buffer of their own (it is handed to the stamping thread, so it
 * must not be a slice of Node's shared pool).
 */
async function readWhole(storage: FileStorage, file: { storageKey: string; size: number }): Promise<Uint8Array> {
  const bytes = new Uint8Array(new ArrayBuffer(file.size));
  let offset = 0;
  for await (const chunk of await storage.read(file.storageKey)) {
    const piece = chunk as Buffer;
    if (offset + piece.length > file.size) throw new Error(`stored file ${file.storageKey} is longer than its record`);
    bytes.set(piece, offset);
    offset += piece.length;
  }
  if (offset !== file.size) throw new Error(`stored file ${file.storageKey} is shorter than its record`);
  return bytes;
}

/** A stored file as the stamping check sees it. */
export interface StampCandidate {
  name: string;
  contentType: string;
  storageKey: string;
  size: number;
}

/**
 * For a product that stamps: refuses (422, naming the file and why) a PDF that could not be stamped
 * (encrypted, unreadable, too large to stamp), so that no download ever meets one. Other files pass.
 */
export async function assertStampableFile(storage: FileStorage, file: StampCandidate): Promise<void> {
  if (!isPdfFile(file)) return;
  if (file.size > MAX_STAMPED_PDF_BYTES) {
    throw new UnprocessableError(`${file.name} cannot be stamped for buyers: PDFs of a product that stamps hold at most ${MAX_STAMPED_PDF_BYTES / 1024 / 1024} MiB`);
  }
  await assertStampableOffThread(await readWhole(storage, file), file.name);
}
