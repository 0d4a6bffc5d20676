import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client as PgClient } from 'pg';
import { loadConfig } from '../../src/config';
import { startEmbeddedPostgres } from '../../src/dev/embedded-postgres';
import { silentLogger } from '../../src/dev/logger';
import { startSeaweedFs } from '../../src/dev/seaweedfs';
// Not src/temporal/worker: global setup must not load the ORM's entities into the outer realm that
// jest's test contexts cannot share.
import { bundleFileName } from '../../src/temporal/workflow-bundle';
import { createTestDatabase, hostPostgresUrl } from './database';
import globalTeardown from './global-teardown';
import { startSharedTemporal } from './temporal-dev-server';

async function reachable(url: string): Promise<boolean> {
  const client = new PgClient({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * A database migrated once, by the service's own `migrate` command (from the build), that test
 * databases are copied from (TEST_TEMPLATE_DATABASE): a copy costs what an empty database does,
 * where migrating each of them cost the run about 40 s of its two cores.
 */
async function makeTemplateDatabase(adminUrl: string, started: Array<() => Promise<void>>): Promise<void> {
  // Made before TEST_TEMPLATE_DATABASE is set: an empty database.
  const template = await createTestDatabase(adminUrl);
  started.push(() => template.drop());
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'delivery-test-template-'));
  try {
    await promisify(execFile)(process.execPath, ['dist/src/cli/main.js', 'migrate'], {
      cwd: path.resolve(__dirname, '../..'),
      env: { ...process.env, DATABASE_URL: template.url, DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
    });
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
  process.env.TEST_TEMPLATE_DATABASE = template.name;
}

/** The PostgreSQL server test databases are made on (the machine's, else an embedded one), with the migrated template. */
async function startDatabaseServer(started: Array<() => Promise<void>>): Promise<void> {
  const adminUrl = hostPostgresUrl();
  if (await reachable(adminUrl)) {
    process.env.TEST_ADMIN_DATABASE_URL = adminUrl;
  } else {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'delivery-test-pg-'));
    const pg = await startEmbeddedPostgres(loadConfig({ DATA_DIR: dataDir }), silentLogger);
    started.push(() => pg.stop());
    process.env.TEST_ADMIN_DATABASE_URL = pg.url;
  }
  await makeTemplateDatabase(process.env.TEST_ADMIN_DATABASE_URL, started);
}

async function startTemporal(started: Array<() => Promise<void>>): Promise<void> {
  const env = await startSharedTemporal();
  started.push(() => env.teardown());
  process.env.TEST_TEMPORAL_ADDRESS = env.address;
}

async function startS3(started: Array<() => Promise<void>>): Promise<void> {
  const s3Dir = await mkdtemp(path.join(os.tmpdir(), 'delivery-test-s3-'));
  started.push(() => rm(s3Dir, { recursive: true, force: true }));
  const s3 = await startSeaweedFs({ root: s3Dir });
  started.push(() => s3.stop());
  process.env.TEST_S3_ENDPOINT = s3.settings.endpoint;
  process.env.TEST_S3_ACCESS_KEY_ID = s3.settings.accessKeyId;
  process.env.TEST_S3_SECRET_ACCESS_KEY = s3.settings.secretAccessKey;
}

/** The build's workflow bundle, plain or traced (`dist/workflow-bundle*.js`): the code `npm start`'s worker runs. */
function builtBundle(traced: boolean): string {
  const file = path.resolve(__dirname, '../../dist', bundleFileName(traced));
  if (!existsSync(file)) throw new Error(`no workflow bundle at ${file}: npm run build writes it`);
  return file;
}

/**
 * Starts what every test file shares, once per run, side by side: the real Temporal dev server
 * (from the Temporal CLI binary), the PostgreSQL server test databases are made on, and a real
 * S3-compatible server (SeaweedFS, built by `npm run setup:s3`) test buckets are made on. The
 * workflow bundles (plain and traced) are the build's. Test files learn of them through
 * environment variables (inherited by jest's workers).
 */
export default async function globalSetup(): Promise<void> {
  // The tests that run the service's processes run them from the build, as `npm start` does: built
  // here once (when a source is newer), not by each file, where two at once would write over each other.
  await promisify(execFile)(process.execPath, ['scripts/build-if-stale.js'], { cwd: path.resolve(__dirname, '../..') });
  process.env.TEST_WORKFLOW_BUNDLE = builtBundle(false);
  process.env.TEST_TRACED_WORKFLOW_BUNDLE = builtBundle(true);

  const started: Array<() => Promise<void>> = [];
  (globalThis as { __testTeardown?: typeof started }).__testTeardown = started;

  // jest runs no global teardown when the setup fails: what was started by then is stopped here, or a
  // missing SeaweedFS build left a Temporal dev server and the template database behind each run.
  const starts = await Promise.allSettled([startDatabaseServer(started), startTemporal(started), startS3(started)]);
  const failed = starts.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await globalTeardown();
    throw failed.reason;
  }
}
