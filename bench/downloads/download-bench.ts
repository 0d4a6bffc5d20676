/**
 * A 1 GiB file through GET /d/{token}/files/{fileId} beside a baseline sending the same bytes, in
 * one run, over 127.0.0.1. Prints MB/s (10^6 bytes) of both, the ratio service/baseline (target
 * ≥ 0.8×), and the server process's RSS sampled during each transfer (streamed, it should stay
 * flat: a constant few tens of MB whatever the file's size), and the server's CPU time per
 * transfer (a steadier comparison than MB/s on a busy machine).
 *
 *   npm run bench:build && node .bench-build/bench/downloads/download-bench.js
 *   BENCH_STORAGE=s3 node .bench-build/bench/downloads/download-bench.js
 *
 * Local disk (default): the baseline is @fastify/static sending the file from the same folder.
 * BENCH_STORAGE=s3: the files are in a SeaweedFS bucket (started here, `npm run setup:s3`), the
 * service streams the object from it, and the baseline is a direct GET of the same object from
 * the S3 server (a presigned URL).
 *
 * The file is random bytes written under the harness's temporary data folder (outside the
 * repository) and removed at the end. BENCH_DOWNLOAD_MIB (default 1024) sets its size,
 * BENCH_ROUNDS (default 6) how many transfers of each are measured after a warm-up, in alternating order.
 * The client is a child process (bench/lib/transfer.ts), so it does not share the servers' event loop.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { Readable } from 'node:stream';
import fastifyStatic from '@fastify/static';
import Fastify from 'fastify';
import { VersionFile } from '../../src/db/entities';
import { startSeaweedFs, type RunningS3Server } from '../../src/dev/seaweedfs';
import { s3ClientOf } from '../../src/storage/s3-storage';
import { seedOrganisation, seedProduct } from '../../test/helpers/seed';
import { seedPurchase } from '../../test/helpers/download-links';
import { startBenchWorld } from '../lib/world';
import { median } from '../lib/load';
import { runBenchmark } from '../lib/run';
import { transfer, type Transfer } from '../lib/transfer';

const MIB = 1024 * 1024;
const SIZE = Number(process.env.BENCH_DOWNLOAD_MIB ?? 1024) * MIB;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const TARGET_RATIO = 0.8;
const CHUNK = 4 * MIB;
const STORAGE = process.env.BENCH_STORAGE === 's3' ? 's3' : 'local';

interface Measured extends Transfer {
  mbPerSecond: number;
  /** CPU time of this (server) process during the transfer: robust when the machine is busy. */
  serverCpuMs: number;
  rssStartMb: number;
  rssMaxMb: number;
  rssGrowthMb: number;
}

const mb = (bytes: number) => Math.round((bytes / 1e6) * 10) / 10;

/** One transfer, with this (server) process's RSS sampled every 20 ms while it runs. */
async function measured(url: string): Promise<Measured> {
  (globalThis as { gc?: () => void }).gc?.();
  const start = process.memoryUsage.rss();
  const cpu = process.cpuUsage();
  let max = start;
  const sampler = setInterval(() => { max = Math.max(max, process.memoryUsage.rss()); }, 20);
  try {
    const result = await transfer(url);
    if (result.status !== 200 || result.bytes !== SIZE) throw new Error(`${url} answered ${result.status} with ${result.bytes} bytes`);
    const used = process.cpuUsage(cpu);
    return {
      ...result,
      mbPerSecond: Math.round(SIZE / 1e6 / (result.ms / 1000)),
      serverCpuMs: Math.round((used.user + used.system) / 1000),
      rssStartMb: mb(start),
      rssMaxMb: mb(max),
      rssGrowthMb: mb(max - start),
    };
  } finally {
    clearInterval(sampler);
  }
}

/** BENCH_STORAGE=s3: a SeaweedFS of the benchmark's own, and the variables that put the files there. */
async function objectStorage(): Promise<{ env: Record<string, string>; server: RunningS3Server; root: string } | undefined> {
  if (STORAGE !== 's3') return undefined;
  const root = await mkdtemp(path.join(os.tmpdir(), 'delivery-bench-s3-'));
  const server = await startSeaweedFs({ root });
  await server.createBucket('bench');
  const { endpoint, accessKeyId, secretAccessKey } = server.settings;
  return { server, root, env: { STORAGE_URL: 's3://bench/files', S3_ENDPOINT: endpoint!, S3_ACCESS_KEY_ID: accessKeyId!, S3_SECRET_ACCESS_KEY: secretAccessKey! } };
}

async function main(): Promise<void> {
  const s3 = await objectStorage();
  const world = await startBenchWorld({ env: s3?.env });
  const bare = Fastify({ logger: false });
  try {
    const { h } = world;
    const org = await seedOrganisation(h);
    const product = await seedProduct(h, org.orgId, { name: 'Bench product' });

    // The big file, written through the storage like an upload (size and SHA-256 on the way).
    const em = h.orm.em.fork();
    const file = em.create(VersionFile, { version: product.versionId, name: 'big.bin', size: 0, sha256: '', storageKey: '' });
    file.storageKey = `files/${file.id}`;
    const written = Date.now();
    const stored = await h.storage.put(file.storageKey, Readable.from((function* () {
      for (let left = SIZE; left > 0; left -= CHUNK) yield randomBytes(Math.min(CHUNK, left));
    })()), SIZE);
    Object.assign(file, stored);
    await em.flush();
    process.stdout.write(`${SIZE / MIB} MiB of random bytes written in ${Date.now() - written} ms\n`);

    const { token } = await seedPurchase(h, org.orgId, product);
    const base = await h.app.listen({ host: '127.0.0.1', port: 0 });
    const urls = { service: `${base}/d/${token}/files/${file.id}`, static: '' };
    if (s3) {
      const client = s3ClientOf(s3.server.settings);
      urls.static = await getSignedUrl(client, new GetObjectCommand({ Bucket: 'bench', Key: `files/${file.storageKey}` }), { expiresIn: 3600 });
    } else {
      await bare.register(fastifyStatic, { root: path.join(h.config.fileStorageDir, 'files'), prefix: '/static/' });
      urls.static = `${await bare.listen({ host: '127.0.0.1', port: 0 })}/static/${file.id}`;
    }
    const baseline = s3 ? 'S3 direct' : '@fastify/static';

    // Warm-up: page cache, JIT, connection set-up paths.
    await measured(urls.static);
    await measured(urls.service);

    const runs: { service: Measured[]; static: Measured[] } = { service: [], static: [] };
    for (let round = 0; round < ROUNDS; round += 1) {
      // Who goes first alternates, so neither always finds the page cache the other just warmed.
      const order = round % 2 === 0 ? (['static', 'service'] as const) : (['service', 'static'] as const);
      for (const which of order) {
        const run = await measured(urls[which]);
        runs[which].push(run);
        process.stdout.write(`${which.padEnd(8)} round ${round + 1}: ${String(run.mbPerSecond).padStart(5)} MB/s   `
          + `server CPU ${String(run.serverCpuMs).padStart(5)} ms   RSS ${run.rssStartMb} → max ${run.rssMaxMb} MB (+${run.rssGrowthMb} MB)\n`);
      }
    }
    const serviceMbps = median(runs.service.map((r) => r.mbPerSecond));
    const staticMbps = median(runs.static.map((r) => r.mbPerSecond));
    const ratio = Number((serviceMbps / staticMbps).toFixed(2));
    const maxGrowth = Math.max(...runs.service.map((r) => r.rssGrowthMb));
    const serviceCpu = median(runs.service.map((r) => r.serverCpuMs));
    const staticCpu = median(runs.static.map((r) => r.serverCpuMs));
    const cpuRatio = Number((staticCpu / serviceCpu).toFixed(2));
    process.stdout.write(`storage: ${h.storage.description}\n`);
    process.stdout.write(`median: service ${serviceMbps} MB/s, ${baseline} ${staticMbps} MB/s, ratio ${ratio}× `
      + `(target ≥ ${TARGET_RATIO}×: ${ratio >= TARGET_RATIO ? 'met' : 'NOT met'})\n`);
    process.stdout.write(`median server CPU per transfer: service ${serviceCpu} ms, ${baseline} ${staticCpu} ms${s3 ? ' (S3 direct: this process does nothing)' : ''}, `
      + `efficiency ratio baseline/service ${cpuRatio}×\n`);
    process.stdout.write(`service RSS growth during a transfer: at most ${maxGrowth} MB for ${SIZE / MIB} MiB sent\n`);
    process.stdout.write(`RESULT ${JSON.stringify({
      storage: STORAGE, baseline, fileMiB: SIZE / MIB, rounds: ROUNDS, serviceMbps, staticMbps, ratio, target: TARGET_RATIO, serviceCpu, staticCpu, cpuRatio,
      met: ratio >= TARGET_RATIO, maxServiceRssGrowthMb: maxGrowth, runs,
    })}\n`);
  } finally {
    await bare.close();
    await world.close();
    await s3?.server.stop();
    if (s3) await rm(s3.root, { recursive: true, force: true });
  }
}

runBenchmark(main);
