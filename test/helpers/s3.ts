import { randomBytes } from 'node:crypto';
import { CreateBucketCommand, ListMultipartUploadsCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { S3Settings } from '../../src/config';
import { s3ClientOf } from '../../src/storage/s3-storage';

/** The run's S3 server (SeaweedFS, started by global setup). */
export function testS3Settings(): S3Settings {
  const endpoint = process.env.TEST_S3_ENDPOINT;
  if (!endpoint) throw new Error('run the tests through jest: global setup starts the S3 server');
  return {
    endpoint, region: 'us-east-1', forcePathStyle: true,
    accessKeyId: process.env.TEST_S3_ACCESS_KEY_ID, secretAccessKey: process.env.TEST_S3_SECRET_ACCESS_KEY,
  };
}

/** A new bucket of this test's own on the run's S3 server; its name. */
export async function createTestBucket(): Promise<string> {
  const name = `test-${randomBytes(6).toString('hex')}`;
  const client = s3ClientOf(testS3Settings());
  await client.send(new CreateBucketCommand({ Bucket: name }));
  client.destroy();
  return name;
}

/** The variables that put a harness's or a process's files in `bucket` on the run's S3 server. */
export function s3StorageEnv(bucket: string, prefix = 'files'): Record<string, string> {
  const s3 = testS3Settings();
  return {
    STORAGE_URL: `s3://${bucket}/${prefix}`, S3_ENDPOINT: s3.endpoint!, S3_ACCESS_KEY_ID: s3.accessKeyId!, S3_SECRET_ACCESS_KEY: s3.secretAccessKey!,
  };
}

/** Every object key in `bucket`, and every unfinished multipart upload (as `upload of <key>`), sorted. */
export async function bucketContents(settings: S3Settings, bucket: string): Promise<string[]> {
  const client = s3ClientOf(settings);
  try {
    const objects = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
    const uploads = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
    return [...(objects.Contents ?? []).map((o) => o.Key!), ...(uploads.Uploads ?? []).map((u) => `upload of ${u.Key}`)].sort();
  } finally {
    client.destroy();
  }
}
