/**
 * The API alone, for purchases-list-bench: run as a child process so that its memory is measured
 * apart from the benchmark's own. No Temporal is needed to list purchases: the client is lazy and
 * never connects. Talks to its parent over IPC: sends `{url}` once listening; answers `memory`
 * with its current and peak RSS; closes on `stop`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../../src/config';
import { createOrm } from '../../src/db/orm';
import { buildApiApp } from '../../src/roles';
import { LocalDiskStorage } from '../../src/storage/local-disk-storage';
import { WorkflowStarter } from '../../src/temporal/client';
import { exitOnFailure } from '../lib/run';

export interface ServerMemory {
  rss: number;
  /** Peak resident set size of the process so far (getrusage ru_maxrss). */
  maxRss: number;
}

async function main(): Promise<void> {
  const databaseUrl = process.env.BENCH_DATABASE_URL;
  if (!databaseUrl || !process.send) throw new Error('started by purchases-list-bench only');
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'delivery-bench-api-'));
  const config = loadConfig({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', BASE_URL: 'http://127.0.0.1' });
  const orm = await createOrm(databaseUrl);
  const temporal = new Client({ connection: Connection.lazy({ address: '127.0.0.1:7233' }) });
  const app = await buildApiApp({
    config, orm, starter: new WorkflowStarter(temporal, config), storage: new LocalDiskStorage(config.fileStorageDir),
    clock: () => new Date(),
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  process.on('message', (message) => {
    if (message === 'memory') {
      const memory: ServerMemory = { rss: process.memoryUsage().rss, maxRss: process.resourceUsage().maxRSS * 1024 };
      process.send?.(memory);
    } else if (message === 'stop') {
      void app.close().then(() => orm.close(true)).then(() => rm(dataDir, { recursive: true, force: true })).then(() => process.exit(0));
    }
  });
  process.send({ url });
}

main().catch(exitOnFailure);
