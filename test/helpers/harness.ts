import { randomBytes } from 'node:crypto';
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Client, Connection } from '@temporalio/client';
import { loadConfig, type Config } from '../../src/config';
import { createOrm, migrate, type Orm } from '../../src/db/orm';
import { loadKeyRing, type KeyRing } from '../../src/security/key-ring';
import { PasswordHasher } from '../../src/security/password-hashing';
import { startDevMailbox, type DevMailbox, type DevMailboxOptions } from '../../src/dev/dev-mailbox';
import { silentLogger } from '../../src/dev/logger';
import { buildApiApp } from '../../src/roles';
import { createMailer, type Mailer } from '../../src/mail/mailer';
import type { FileStorage } from '../../src/storage/file-storage';
import { openFileStorage } from '../../src/storage/open-file-storage';
import { connectTemporal, WorkflowStarter } from '../../src/temporal/client';
import { ensureSearchAttributes } from '../../src/temporal/register-search-attributes';
import { createWorker, type ServiceWorker } from '../../src/temporal/worker';
import { createTestDatabase, TEST_DATABASE_POOL_MAX, TEST_POOL } from './database';
import { TEST_PASSWORD_SCRYPT_N } from './seed';

export interface HarnessOptions {
  clock?: () => Date;
  env?: Record<string, string>;
  mailbox?: DevMailboxOptions;
  /** Default true: a worker runs the workflows on this harness's own task queue. */
  worker?: boolean;
  /** The worker runs the traced workflow bundle (OpenTelemetry's workflow interceptors). */
  tracedWorkflows?: boolean;
  /** A superuser's URL of a PostgreSQL server of the test's own, to make the database on (default: the shared one). */
  postgresAdminUrl?: string;
}

/** One test file's world: its own database, mailbox, task queue, worker and app, on the shared servers. */
export interface Harness {
  config: Readonly<Config>;
  orm: Orm;
  mailbox: DevMailbox;
  mailer: Mailer;
  temporal: Client;
  starter: WorkflowStarter;
  /** The harness's SECRETS_KEY ring (the key file under its DATA_DIR): payloads and secrets. */
  keyRing: KeyRing;
  /** Local disk under the harness's DATA_DIR, or S3 when `env` sets STORAGE_URL. */
  storage: FileStorage;
  /** Staff passwords at the harness's scrypt cost (TEST_PASSWORD_SCRYPT_N unless `env` sets PASSWORD_SCRYPT_N). */
  passwords: PasswordHasher;
  app: FastifyInstance;
  close(): Promise<void>;
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const temporalAddress = process.env.TEST_TEMPORAL_ADDRESS;
  const bundlePath = options.tracedWorkflows ? process.env.TEST_TRACED_WORKFLOW_BUNDLE : process.env.TEST_WORKFLOW_BUNDLE;
  if (!temporalAddress || !bundlePath) throw new Error('run the tests through jest: global setup starts Temporal');

  const database = await createTestDatabase(options.postgresAdminUrl);
  const mailbox = await startDevMailbox(silentLogger, { port: 0, ...options.mailbox });
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'delivery-test-data-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    DATABASE_URL: database.url,
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_TASK_QUEUE: `test-${randomBytes(4).toString('hex')}`,
    SMTP_URL: mailbox.url,
    BASE_URL: 'http://delivery.test',
    LOG_LEVEL: 'silent',
    // In-process workers share one runtime, installed by the test run: no endpoint of their own.
    WORKER_METRICS_ADDRESS: 'off',
    PASSWORD_SCRYPT_N: TEST_PASSWORD_SCRYPT_N,
    // Three test files at once, some with service processes of their own, within PostgreSQL's default 100 connections.
    DATABASE_POOL_MAX: TEST_DATABASE_POOL_MAX,
    ...options.env,
  });
  const orm = await createOrm(database.url, { pool: { ...TEST_POOL, max: config.databasePoolMax } });
  // A copy of the template is migrated already: checking again would load the migrator in every file.
  if (!database.migrated) await migrate(orm);
  const keyRing = await loadKeyRing(config);
  const { connection, client: temporal } = connectTemporal(temporalAddress, config.temporal.namespace, keyRing);
  await ensureSearchAttributes(connection, config.temporal.namespace);
  const starter = new WorkflowStarter(temporal, config);
  const mailer = createMailer(mailbox.url, config.mailFrom);
  const storage = await openFileStorage(config);

  let worker: ServiceWorker | undefined;
  let workerRun: Promise<void> | undefined;
  let closeWorkerConnection: (() => Promise<void>) | undefined;
  if (options.worker !== false) {
    const created = await createWorker({
      deps: { orm, mailer, config },
      address: temporalAddress,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      workflowBundle: { code: await readFile(bundlePath, 'utf8') },
      shutdownGraceTime: '1s',
      maxCachedWorkflows: config.workerMaxCachedWorkflows,
      keyRing,
      acceptPlaintextPayloads: config.temporal.acceptPlaintextPayloads,
    });
    worker = created.worker;
    workerRun = worker.run();
    closeWorkerConnection = () => created.connection.close();
  }

  const app = await buildApiApp({
    config, orm, starter, storage, databaseUrl: database.url, clock: options.clock ?? (() => new Date()),
  });
  await app.ready();

  return {
    config, orm, mailbox, mailer, temporal, starter, keyRing, storage, app, passwords: new PasswordHasher(config.passwordHashCost),
    async close() {
      await app.close();
      if (worker) {
        worker.shutdown();
        await workerRun;
        await closeWorkerConnection?.();
      }
      await connection.close();
      mailer.close();
      await mailbox.stop();
      await orm.close(true);
      await database.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** A workflow starter whose engine is never reachable (a closed port): stands for a Temporal outage. */
export function unreachableStarter(config: Config): WorkflowStarter {
  return new WorkflowStarter(new Client({ connection: Connection.lazy({ address: '127.0.0.1:1' }), namespace: config.temporal.namespace }), config);
}
