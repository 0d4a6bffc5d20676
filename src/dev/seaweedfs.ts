/**
 * A real S3-compatible server for the storage tests, the benchmarks and `npm run start:cluster`:
 * SeaweedFS (`weed server -s3`), built once from its Go module by `npm run setup:s3`. Master,
 * volume, filer and S3 gateway in one process, bound to loopback, data under one folder, with one
 * access key so that requests are signed and checked as on a real deployment.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CreateBucketCommand, ListBucketsCommand } from '@aws-sdk/client-s3';
import type { S3Settings } from '../config';
import { s3ClientOf } from '../storage/s3-storage';
import { spawnWatched, stopChild } from './child-processes';
import type { Logger } from './logger';
import { freePortBlock } from './ports';
import { findCachedBinary } from './binary-cache';

/** Master, volume, filer and S3 gateway, then their gRPC ports (set too: SeaweedFS's default is port + 10000). */
const PORT_OFFSETS = [0, 1, 2, 3, 4, 5, 6, 7];

export interface RunningS3Server {
  /** How the service's S3 client reaches it (endpoint, region, the access key, path-style). */
  settings: S3Settings;
  /** Creates a bucket (a no-op when it exists). */
  createBucket(name: string): Promise<void>;
  stop(): Promise<void>;
}

/** `weed` on PATH, else the one `npm run setup:s3` built into the cache. */
export function findSeaweedFs(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return findCachedBinary('weed', 'seaweedfs', env);
}

/** How long a stopping server gets to close its stores before it is killed. */
const STOP_GRACE_MS = 2_000;

export async function startSeaweedFs(options: { root: string; log?: Logger }): Promise<RunningS3Server> {
  const binary = findSeaweedFs();
  if (!binary) throw new Error('no SeaweedFS binary: run `npm run setup:s3` once (builds it with Go, about 11 minutes)');
  const base = await freePortBlock(PORT_OFFSETS, { from: 18_000, below: 32_768, step: 10 });
  const [master, volume, filer, s3] = [base, base + 1, base + 2, base + 3];
  const grpc = (port: number) => port + 4;
  const settings: S3Settings = {
    endpoint: `http://127.0.0.1:${s3}`,
    region: 'us-east-1',
    accessKeyId: `dev${randomBytes(6).toString('hex')}`,
    secretAccessKey: randomBytes(24).toString('base64url'),
    forcePathStyle: true,
  };
  const dataDir = path.join(options.root, 'data');
  await mkdir(dataDir, { recursive: true });
  const identities = path.join(options.root, 's3-identities.json');
  await writeFile(identities, JSON.stringify({
    identities: [{ name: 'delivery-service', credentials: [{ accessKey: settings.accessKeyId, secretKey: settings.secretAccessKey }], actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'] }],
  }), { mode: 0o600 });
  const watched = spawnWatched(binary, [
    'server', `-dir=${dataDir}`, '-ip=127.0.0.1', '-ip.bind=127.0.0.1',
    `-master.port=${master}`, `-master.port.grpc=${grpc(master)}`, `-volume.port=${volume}`, `-volume.port.grpc=${grpc(volume)}`,
    `-filer.port=${filer}`, `-filer.port.grpc=${grpc(filer)}`,
    '-s3', `-s3.port=${s3}`, `-s3.port.grpc=${grpc(s3)}`, `-s3.config=${identities}`,
    // Its Iceberg and Lance catalogue servers listen on fixed ports by default: not wanted here.
    '-s3.port.iceberg=0', '-s3.port.lance=0',
    // Small volumes: the default (30 GB each, several of them) asks for more disk than a test needs.
    '-master.volumeSizeLimitMB=512', '-volume.max=0',
    // A stopping volume server first waits this long for its master to hear it leave (10 s by
    // default): pointless with the one master in the same process, and it made every stop 10 s.
    '-volume.preStopSeconds=0',
  ], { cwd: options.root, env: process.env });
  const client = s3ClientOf(settings);
  const stop = async () => {
    client.destroy();
    // On SIGINT `weed server` closes its volume and filer stores (in about half a second, measured)
    // but its master never lets the process exit, on SIGINT or SIGTERM: killed once they are closed.
    await stopChild(watched.child, STOP_GRACE_MS, 'SIGINT');
  };
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (watched.child.exitCode !== null) throw new Error(`SeaweedFS exited (${watched.child.exitCode}):\n${watched.output()}`);
      try {
        await client.send(new ListBucketsCommand({}));
        break;
      } catch (error) {
        if (Date.now() > deadline) throw new Error(`SeaweedFS's S3 gateway did not answer in 60 s (${(error as Error).message}):\n${watched.output()}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  } catch (error) {
    await stop();
    throw error;
  }
  options.log?.info(`SeaweedFS S3 gateway on ${settings.endpoint} (data under ${dataDir})`);
  return {
    settings,
    async createBucket(name) {
      try {
        await client.send(new CreateBucketCommand({ Bucket: name }));
      } catch (error) {
        if (!/BucketAlreadyExists|BucketAlreadyOwnedByYou/.test((error as Error).name)) throw error;
      }
    },
    stop,
  };
}
