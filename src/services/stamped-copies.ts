import { Readable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import { isPdfFile, MAX_STAMPED_PDF_BYTES, pdfStampOf } from '../domain/pdf-stamp';
import { UnprocessableError } from '../domain/errors';
import { lockStampedCopy, recordStampedCopy, stampedCopyOf, type StampedCopyRow } from '../downloads/stamped-copy-store';
import { assertStampableOffThread, stampPdfOffThread } from '../downloads/pdf-stamping';
import { purchaseBuyer } from '../purchases/purchase-store';
import { ObjectNotFoundError, type FileStorage } from '../storage/file-storage';
import type { DownloadFile, DownloadLink } from './downloads';

/** The file a request is served, and whether its stamped copy was made for this request. */
export interface ServedFile {
  file: DownloadFile;
  madeCopy: boolean;
}

/**
 * What a link's file request is served (decisions §16): the stored file itself, or, for a PDF of a
 * product that stamps, the purchase's stamped copy, made on its first request and kept in the file
 * storage. Either way the bytes are checked to be there with their recorded size.
 */
export async function servedFile(em: EntityManager, storage: FileStorage, link: DownloadLink, file: DownloadFile, now: Date): Promise<ServedFile> {
  if (!(link.stampPdfs && isPdfFile(file))) {
    const stored = await storage.stat(file.storageKey);
    if (stored.size !== file.size) throw new Error(`stored size of file ${file.id} differs from its record`);
    return { file, madeCopy: false };
  }
  const known = await stampedCopyOf(em, link.purchaseId, file.id);
  if (known && (await holds(storage, known))) return { file: asServed(file, known), madeCopy: false };
  return em.transactional(async (tx) => {
    // Two first requests at once: the second waits here, then finds the first's copy.
    await lockStampedCopy(tx, link.purchaseId, file.id);
    const made = await stampedCopyOf(tx, link.purchaseId, file.id);
    if (made && (await holds(storage, made))) return { file: asServed(file, made), madeCopy: false };
    return { file: asServed(file, await makeStampedCopy(tx, storage, link, file, now)), madeCopy: true };
  });
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

/** Stamps the file for the purchase, stores the copy (its key made from ids only) and records it. */
async function makeStampedCopy(tx: EntityManager, storage: FileStorage, link: DownloadLink, file: DownloadFile, now: Date): Promise<StampedCopyRow> {
  const buyer = await purchaseBuyer(tx, link.orgId, link.purchaseId);
  if (!buyer) throw new Error(`purchase ${link.purchaseId} of a download link is gone`);
  const stamp = pdfStampOf({ purchaseId: link.purchaseId, email: buyer.email, orderId: buyer.orderId });
  const stamped = await stampPdfOffThread(await readWhole(storage, file), stamp);
  const storageKey = `stamped/${link.purchaseId}/${file.id}`;
  const put = await storage.put(storageKey, Readable.from([Buffer.from(stamped.buffer, stamped.byteOffset, stamped.byteLength)]), Number.MAX_SAFE_INTEGER);
  await recordStampedCopy(tx, { purchaseId: link.purchaseId, fileId: file.id, storageKey, size: put.size, sha256: put.sha256 }, now);
  return { storage_key: storageKey, size: put.size, sha256: put.sha256, created_at: now };
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
