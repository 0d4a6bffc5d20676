import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { S3Settings } from '../config';
import { assertStorageKey, ObjectNotFoundError, type FileStorage, type ObjectStat, type StoredObject } from './file-storage';
import { meteredStream } from './metered';

/**
 * Multipart part size: an upload holds at most PART_SIZE × UPLOAD_QUEUE bytes in memory, whatever
 * the file's size (S3's minimum part is 5 MiB; 10,000 parts of 8 MiB cover 78 GiB).
 */
const PART_SIZE = 8 * 1024 * 1024;
const UPLOAD_QUEUE = 2;

export function s3ClientOf(settings: S3Settings): S3Client {
  // The SDK warns on every start that its releases after January 2027 need Node 22: this one is
  // pinned and works on Node 20 (README, choices). Not a setting of the service: the SDK's own switch.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  return new S3Client({
    region: settings.region,
    endpoint: settings.endpoint,
    forcePathStyle: settings.forcePathStyle,
    credentials: settings.accessKeyId && settings.secretAccessKey
      ? { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey }
      : undefined,
    // Checksums only where S3 requires them: the SDK's default (a CRC32 trailer on every upload)
    // is not understood by every S3-compatible server, and the service keeps its own SHA-256.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

function isNotFound(error: unknown): boolean {
  return error instanceof S3ServiceException && (error.$metadata.httpStatusCode === 404 || error.name === 'NoSuchKey' || error.name === 'NotFound');
}

/**
 * Files in S3-compatible object storage (STORAGE_URL `s3://bucket/prefix`): any API process on any
 * host serves any file. Uploads stream into a multipart upload while their SHA-256 is computed;
 * reads stream the object's byte range with backpressure.
 */
export class S3Storage implements FileStorage {
  readonly description: string;
  private readonly prefix: string;

  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    prefix: string,
  ) {
    this.prefix = prefix.replace(/^\/+|\/+$/g, '');
    this.description = `s3://${bucket}${this.prefix ? `/${this.prefix}` : ''}`;
  }

  private objectKey(key: string): string {
    assertStorageKey(key);
    return this.prefix ? `${this.prefix}/${key}` : key;
  }

  /** At start: the bucket must exist and answer; says which and why when it does not. */
  async check(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
    } catch (error) {
      const status = (error as S3ServiceException).$metadata?.httpStatusCode;
      const why = status === 404 ? 'does not exist (create it first)' : status === 403 ? 'refuses these credentials' : `is out of reach: ${(error as Error).message}`;
      throw new Error(`object storage: bucket "${this.bucket}" ${why}`);
    }
  }

  async put(key: string, body: Readable, maxBytes: number): Promise<StoredObject> {
    const Key = this.objectKey(key);
    const { meter, result } = meteredStream(maxBytes);
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key, Body: meter },
      partSize: PART_SIZE,
      queueSize: UPLOAD_QUEUE,
      leavePartsOnError: false,
    });
    const piping = pipeline(body, meter);
    try {
      await Promise.all([piping, upload.done()]);
    } catch (error) {
      // Stop reading the request, drop the multipart upload's parts, and remove an object a
      // single-part upload may have completed just before the failure.
      meter.destroy();
      piping.catch(() => undefined);
      await upload.abort().catch(() => undefined);
      await this.abortUnfinishedUploads(Key).catch(() => undefined);
      await this.delete(key).catch(() => undefined);
      throw error;
    }
    return result();
  }

  /**
   * lib-storage's abort misses a multipart upload whose creation was still in flight when the body
   * failed (seen under load): list what is left under the key and abort it, until a look finds
   * nothing twice in a row. Keys are unique per file, so nothing else uploads to this one.
   */
  private async abortUnfinishedUploads(Key: string): Promise<void> {
    let quiet = 0;
    for (let look = 0; look < 10 && quiet < 2; look += 1) {
      const listed = await this.client.send(new ListMultipartUploadsCommand({ Bucket: this.bucket, Prefix: Key }));
      const left = (listed.Uploads ?? []).filter((u) => u.Key === Key && u.UploadId);
      quiet = left.length === 0 ? quiet + 1 : 0;
      await Promise.all(left.map((u) => this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key, UploadId: u.UploadId }))));
      if (quiet < 2) await new Promise((r) => setTimeout(r, 100));
    }
  }

  async stat(key: string): Promise<ObjectStat> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
      return { size: head.ContentLength ?? 0, modifiedAt: head.LastModified ?? new Date(0) };
    } catch (error) {
      throw isNotFound(error) ? new ObjectNotFoundError(key) : error;
    }
  }

  async read(key: string, range?: { start: number; end: number }): Promise<Readable> {
    try {
      const object = await this.client.send(new GetObjectCommand({
        Bucket: this.bucket,
        Key: this.objectKey(key),
        Range: range ? `bytes=${range.start}-${range.end}` : undefined,
      }));
      return object.Body as Readable;
    } catch (error) {
      throw isNotFound(error) ? new ObjectNotFoundError(key) : error;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
  }
}
