import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { ProductVersion, VersionFile } from '../db/entities';
import { ConflictError, PayloadTooLargeError, ValidationError } from '../domain/errors';
import { VERSION_STATUSES } from '../domain/statuses';
import { unstorableText } from '../domain/storable-text';
import { ObjectTooLargeError, type FileStorage } from '../storage/file-storage';
import { findProduct } from './products';
import { assertStampableFile } from './stamped-copies';

// ---------------------------------------------------------------------------------------------
// Wire shape (decisions §3)

export const VersionFileSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  size: z.number().int(),
  sha256: z.string().describe('hex SHA-256 of the bytes stored'),
});

export const VersionSchema = z.object({
  id: z.uuid(),
  productId: z.uuid(),
  version: z.string(),
  status: z.enum(VERSION_STATUSES),
  files: z.array(VersionFileSchema).describe('ordered by name'),
  createdAt: z.string().describe('ISO 8601'),
});
export type VersionJson = z.infer<typeof VersionSchema>;

type FileJson = z.infer<typeof VersionFileSchema>;
const fileJson = (file: VersionFile): FileJson => ({ id: file.id, name: file.name, size: file.size, sha256: file.sha256 });
const byName = (a: FileJson, b: FileJson): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : 1);

function versionJson(version: ProductVersion, productId: string, files: FileJson[]): VersionJson {
  return {
    id: version.id,
    productId,
    version: version.version,
    status: version.status,
    files: [...files].sort(byName),
    createdAt: version.createdAt.toISOString(),
  };
}

/** GET /api/products/{productId}/versions: newest first, two queries whatever the count. */
export async function listVersions(em: EntityManager, orgId: string, productId: string): Promise<VersionJson[]> {
  const product = await findProduct(em, orgId, productId);
  const versions = await em.find(ProductVersion, { product }, { orderBy: { createdAt: 'desc', id: 'desc' } });
  const files = versions.length > 0 ? await em.find(VersionFile, { version: { $in: versions.map((v) => v.id) } }) : [];
  const filesOf = new Map<string, FileJson[]>(versions.map((v) => [v.id, []]));
  for (const file of files) filesOf.get(file.version.id)?.push(fileJson(file));
  return versions.map((v) => versionJson(v, product.id, filesOf.get(v.id) ?? []));
}

// ---------------------------------------------------------------------------------------------
// Upload

/** One part of a multipart body, as @fastify/multipart yields it (only what is used here). */
export type UploadPart =
  | { type: 'field'; fieldname: string; value: unknown }
  | { type: 'file'; fieldname: string; filename: string; mimetype: string; file: Readable & { truncated: boolean } };

export interface VersionUpload {
  orgId: string;
  productId: string;
  parts: AsyncIterable<UploadPart>;
  /** Per file; a file past it answers 413 and leaves nothing behind. */
  maxFileBytes: number;
  /** All files of the request together (MAX_UPLOAD_REQUEST_BYTES); past it, the same. */
  maxRequestBytes: number;
}

interface StoredFile {
  id: string;
  storageKey: string;
  name: string;
  contentType: string;
  size: number;
  sha256: string;
}

const MIME_RE = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/i;

/**
 * The client's base name only (any folder part stripped, control characters dropped): shown to
 * customers, never used to build a path (storage keys come from the file id).
 */
export function baseFileName(filename: string): string {
  // eslint-disable-next-line no-control-regex
  const base = filename.split(/[/\\]/).pop()!.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return base.slice(0, 255);
}

function versionLabelOf(value: string | undefined): string {
  const label = value?.trim();
  if (!label) throw new ValidationError('version is required');
  if (label.length > 100) throw new ValidationError('version has at most 100 characters');
  const unstorable = unstorableText(label);
  if (unstorable !== null) throw new ValidationError(`version ${unstorable}`);
  return label;
}

function activateOf(value: string | undefined): boolean {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw new ValidationError('activate must be "true" or "false"');
}

async function assertLabelFree(em: EntityManager, productId: string, label: string): Promise<void> {
  if ((await em.count(ProductVersion, { product: productId, version: label })) > 0) {
    throw new ConflictError(`version "${label}" already exists for this product`);
  }
}

/**
 * POST /api/products/{productId}/versions. Each file part streams straight into storage (SHA-256
 * computed on the way, nothing buffered); the `version` field may come before or after the files,
 * so the rows are written in one transaction at the end. Any failure (413, 400, 409, a PDF a product
 * that stamps could not stamp (422), a client that goes away) deletes the files stored so far: no
 * rows and no files are left behind.
 */
export async function uploadVersion(em: EntityManager, storage: FileStorage, upload: VersionUpload): Promise<VersionJson> {
  const product = await findProduct(em, upload.orgId, upload.productId);
  const stored: StoredFile[] = [];
  let received = 0;
  try {
    const fields: Record<string, string> = {};
    for await (const part of upload.parts) {
      if (part.type === 'field') {
        fields[part.fieldname] = String(part.value);
        // Refuse a duplicate label before any bytes are stored, when the client sends it first.
        if (part.fieldname === 'version' && stored.length === 0) await assertLabelFree(em, product.id, versionLabelOf(fields.version));
        continue;
      }
      if (part.fieldname !== 'file') {
        part.file.resume();
        throw new ValidationError(`unexpected file field "${part.fieldname}" (files go in "file" parts)`);
      }
      const name = baseFileName(part.filename);
      if (!name) {
        part.file.resume();
        throw new ValidationError('each file part needs a file name');
      }
      const id = randomUUID();
      const storageKey = `files/${id}`;
      // Recorded before the put so that a failure half-way still has it deleted.
      const entry: StoredFile = { id, storageKey, name, contentType: MIME_RE.test(part.mimetype) ? part.mimetype : 'application/octet-stream', size: 0, sha256: '' };
      stored.push(entry);
      const left = upload.maxRequestBytes - received;
      let put: { size: number; sha256: string };
      try {
        put = await storage.put(storageKey, part.file, Math.min(upload.maxFileBytes, left));
      } catch (error) {
        if (error instanceof ObjectTooLargeError && left < upload.maxFileBytes) {
          throw new PayloadTooLargeError(`the files of one upload exceed the limit of ${upload.maxRequestBytes} bytes together`);
        }
        throw error;
      }
      // The multipart parser stops a file at its own fileSize limit and marks it truncated.
      if (part.file.truncated) throw new PayloadTooLargeError(`a file exceeds the upload limit of ${upload.maxFileBytes} bytes`);
      received += put.size;
      Object.assign(entry, put);
      // A product that stamps never gets a PDF its downloads could not stamp (decisions §16).
      if (product.stampPdfs) await assertStampableFile(storage, entry);
    }

    const label = versionLabelOf(fields.version);
    const activate = activateOf(fields.activate);
    if (stored.length === 0) throw new ValidationError('at least one file is required (multipart parts named "file")');
    await assertLabelFree(em, product.id, label);

    const version = await em.transactional(async (tx) => {
      const row = tx.create(ProductVersion, { product: product.id, version: label });
      for (const file of stored) {
        tx.create(VersionFile, {
          id: file.id, version: row, name: file.name, size: file.size, sha256: file.sha256,
          storageKey: file.storageKey, contentType: file.contentType,
        });
      }
      if (activate) {
        const owner = await findProduct(tx, upload.orgId, product.id);
        owner.activeVersion = row;
      }
      return row;
    });
    return versionJson(version, product.id, stored.map((f) => ({ id: f.id, name: f.name, size: f.size, sha256: f.sha256 })));
  } catch (error) {
    await Promise.all(stored.map((file) => storage.delete(file.storageKey).catch(() => undefined)));
    throw error;
  }
}
