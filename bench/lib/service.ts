/**
 * The service under test as users run it, from the build: `npm start` (API and worker in one
 * process) or the production roles apart (`start:api` and `start:worker`). Both use a Temporal dev
 * server this process runs with exactly the arguments `npm start` gives its embedded one (so a
 * benchmark can put a baseline on the same engine, or stop and restart it). PostgreSQL is a scratch
 * database on the system server; mail goes to a counting SMTP sink in this process. Every child's
 * resident memory is sampled while it runs.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { SMTPServer } from 'smtp-server';
import { loadConfig } from '../../src/config';
import { createOrm, migrate, type Orm } from '../../src/db/orm';
import { freePort } from '../../src/dev/ports';
import { findTemporalCli } from '../../src/dev/temporal-cli';
import {
  findTemporalServer, freeFrontendPort, prepareTemporalDatabases, startTemporalServer, untilNamespace, type RunningTemporalServer,
} from '../../src/dev/temporal-cluster';
import { ensureSearchAttributes } from '../../src/temporal/register-search-attributes';
import { API_NODE_FLAGS } from '../../src/http/api-process';
import { WORKER_NODE_FLAGS, WORKER_PROCESS_ENV } from '../../src/temporal/worker-process';
import { devServerArgs } from '../../src/dev/temporal-dev-server';
import { OWASP_SCRYPT_COST, PasswordHasher } from '../../src/security/password-hashing';
import { LocalDiskStorage } from '../../src/storage/local-disk-storage';
import { spawnWatched, stopChild, waitForOutput, type WatchedChild } from '../../src/dev/child-processes';
import { createTestDatabase, hostPostgresUrl } from '../../test/helpers/database';

const ROOT = path.resolve(__dirname, '../../..');

/**
 * `all-in-one`: `npm start`'s process (API + worker); `roles`: `start:api` and `start:worker`;
 * `front-door`: `start:api` alone with its dispatcher off (DISPATCH_LOOPS=0), to tell the cost of
 * recording a delivery from that of fulfilling it on the same cores. Nothing drains its outbox, so
 * the per-organisation backlog cap is lifted there: at the default (5,000 waiting starts) the
 * benchmark's one organisation was answered 503 after its first 5,000 orders, and those refusals
 * were counted as acknowledgements per second.
 */
export type ServiceShape = 'all-in-one' | 'roles' | 'front-door';

/** An SMTP server that accepts everything and counts messages per recipient. */
export interface SmtpSink {
  url: string;
  received(): number;
  /** When the first message to `address` arrived (Date.now()), if one did. */
  arrivedAt(address: string): number | undefined;
  close(): Promise<void>;
}

export async function startSmtpSink(): Promise<SmtpSink> {
  let received = 0;
  const arrivals = new Map<string, number>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      stream.on('data', () => undefined);
      stream.on('end', () => {
        received += 1;
        for (const { address } of session.envelope.rcptTo) if (!arrivals.has(address)) arrivals.set(address, Date.now());
        callback();
      });
    },
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `smtp://127.0.0.1:${port}`,
    received: () => received,
    arrivedAt: (address) => arrivals.get(address),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A role's process, with the most resident memory seen of it. */
type Child = WatchedChild & { role: string; peakRssMb: number };

/** The Temporal dev server of a benchmark: stopped and started again on the same port and state. */
export interface BenchTemporal {
  address: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** After the last stop: drops what the engine kept outside the run's folder. */
  dispose(): Promise<void>;
}

/**
 * BENCH_ENGINE=server: the real Temporal server on the benchmark's PostgreSQL (its own pair of
 * databases, dropped afterwards), as `npm run start:cluster` runs it; else the CLI's dev server.
 */
const ENGINE = process.env.BENCH_ENGINE === 'server' ? 'server' : 'dev-server';

/**
 * The Node that runs the service: the one every npm script runs (the `node` package, Node 24 LTS),
 * whichever Node started the benchmark, so that `node .bench-build/…` on a machine whose own Node
 * is older measures the service as `npm start` runs it. BENCH_SERVICE_NODE names another binary, to
 * compare runtimes.
 */
const PROJECT_NODE = path.join(ROOT, 'node_modules/.bin/node');
const SERVICE_NODE = process.env.BENCH_SERVICE_NODE ?? (existsSync(PROJECT_NODE) ? PROJECT_NODE : process.execPath);

/** What runs the service: its Node and its workflow engine, for a benchmark's first line. */
export function runtimeName(): string {
  const node = execFileSync(SERVICE_NODE, ['--version']).toString().trim();
  const engine = ENGINE === 'server' ? `Temporal server on PostgreSQL (${SERVER_SHARDS} history shards)` : 'Temporal dev server (SQLite, npm start\'s settings)';
  return `service on Node ${node}, ${engine}`;
}

const SERVER_SHARDS = Number(process.env.BENCH_HISTORY_SHARDS ?? 4);

async function startBenchServer(dataDir: string): Promise<BenchTemporal> {
  const binaries = findTemporalServer();
  if (!binaries) throw new Error('no Temporal server: run npm run setup:temporal -- --server');
  const adminUrl = process.env.TEST_ADMIN_DATABASE_URL ?? hostPostgresUrl();
  const suffix = Math.random().toString(36).slice(2, 8);
  const databases = { history: `temporal_bench_${suffix}`, visibility: `temporal_bench_vis_${suffix}` };
  await prepareTemporalDatabases(adminUrl, binaries.sql, databases);
  const ports = { frontend: await freeFrontendPort(), metrics: await freePort() };
  let server: RunningTemporalServer | undefined;
  const start = async () => {
    server = await startTemporalServer({ serverBinary: binaries.server, root: path.join(dataDir, 'temporal-server'), databaseUrl: adminUrl, ports, shards: SERVER_SHARDS, namespace: 'default', databases }, { info: () => undefined, warn: () => undefined, error: () => undefined });
    const connection = await Connection.connect({ address: server.address });
    await ensureSearchAttributes(connection, 'default').finally(() => connection.close());
  };
  const dispose = async () => {
    const admin = await createOrm(adminUrl);
    for (const name of Object.values(databases)) await admin.em.fork().execute(`drop database if exists "${name}" with (force)`);
    await admin.close(true);
  };
  try {
    await start();
  } catch (error) {
    await dispose();
    throw error;
  }
  return {
    address: `127.0.0.1:${ports.frontend}`,
    start,
    stop: async () => {
      await server?.stop();
    },
    dispose,
  };
}

/** A dev server with `npm start`'s arguments, or other throughput settings (`tuning`). */
export async function startBenchTemporal(dataDir: string, tuning?: readonly string[]): Promise<BenchTemporal> {
  if (ENGINE === 'server' && tuning === undefined) return startBenchServer(dataDir);
  const cli = findTemporalCli(loadConfig({ TEMPORAL_CLI_PATH: process.env.TEMPORAL_CLI_PATH }));
  if (!cli) throw new Error('no Temporal CLI: run npm run setup:temporal');
  const port = await freePort();
  const args = devServerArgs({ dbFile: path.join(dataDir, 'temporal.sqlite'), port, uiPort: await freePort(), namespace: 'default' }, tuning);
  const address = `127.0.0.1:${port}`;
  let child: WatchedChild | undefined;
  const start = async () => {
    child = spawnWatched(cli, args, { cwd: ROOT, env: process.env });
    lowerPriority(child.child.pid);
    await untilNamespace(address, 'default', child);
  };
  await start();
  return { address, start, stop: async () => { if (child) await stopChild(child.child); }, dispose: async () => undefined };
}

export interface RunningService {
  base: string;
  temporal: BenchTemporal;
  /** The service's database, for seeding and for counting outcomes. */
  orm: Orm;
  /** Where the service keeps product files (seeded products put theirs here). */
  storage: LocalDiskStorage;
  /** Staff passwords at the service's scrypt cost (its default), for seeded accounts. */
  passwords: PasswordHasher;
  /** Peak resident memory of each role's process so far, in MB. */
  peakRssMb(): Record<string, number>;
  close(): Promise<void>;
}

function rssMbOf(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Math.round(Number(match[1]) / 1024) : 0;
  } catch {
    return 0;
  }
}

/** Settings for the service's processes, from BENCH_SERVICE_ENV (`DISPATCH_LOOPS=1 DISPATCH_BATCH_SIZE=10`). */
const SERVICE_ENV: Record<string, string> = Object.fromEntries((process.env.BENCH_SERVICE_ENV ?? '').split(/\s+/).filter(Boolean)
  .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));

/**
 * BENCH_SYNCHRONOUS_COMMIT=off: an experiment, not a setting of the service. The benchmark's
 * database stops waiting for WAL flushes at commit, to tell how much of a latency is the disk's.
 */
const SYNCHRONOUS_COMMIT = process.env.BENCH_SYNCHRONOUS_COMMIT;

/** Node's own flags for the service's processes (e.g. `--cpu-prof`), from BENCH_SERVICE_NODE_ARGS. */
const SERVICE_NODE_ARGS = process.env.BENCH_SERVICE_NODE_ARGS?.split(' ').filter(Boolean) ?? [];

/**
 * BENCH_BACKGROUND_NICE: the CPU priority (nice value) given to the worker processes and the
 * Temporal engine, so that the API's acknowledgements come first on a shared machine; unset: all equal.
 */
const BACKGROUND_NICE = process.env.BENCH_BACKGROUND_NICE === undefined ? undefined : Number(process.env.BENCH_BACKGROUND_NICE);

function lowerPriority(pid: number | undefined): void {
  if (BACKGROUND_NICE !== undefined && pid) os.setPriority(pid, BACKGROUND_NICE);
}

/** A role's process, started as its npm script starts it (the worker with its memory bounds). */
function spawnRole(role: string, script: string, env: NodeJS.ProcessEnv): Child {
  const worker = role.startsWith('worker');
  const watched = spawnWatched(
    SERVICE_NODE,
    [...(worker ? WORKER_NODE_FLAGS : role === 'api' ? API_NODE_FLAGS : []), ...SERVICE_NODE_ARGS, path.join(ROOT, 'dist/src', script)],
    { cwd: ROOT, env: worker ? { ...WORKER_PROCESS_ENV, ...env } : env },
  );
  if (worker) lowerPriority(watched.child.pid);
  return { ...watched, role, peakRssMb: 0 };
}

/** Role processes take their time on a loaded machine (migrations, the worker's bundle). */
const ROLE_START_MS = 120_000;

/** Starts the service from `dist/` (run `npm run build` first) in the given shape. */
export async function startService(shape: ServiceShape, smtpUrl: string, extraEnv: NodeJS.ProcessEnv = {}): Promise<RunningService> {
  process.env.TEST_ADMIN_DATABASE_URL ??= hostPostgresUrl();
  const database = await createTestDatabase();
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'delivery-bench-service-'));
  const orm = await createOrm(database.url);
  await migrate(orm);
  if (SYNCHRONOUS_COMMIT) {
    const name = new URL(database.url).pathname.slice(1);
    await orm.em.fork().execute(`alter database "${name}" set synchronous_commit = '${SYNCHRONOUS_COMMIT === 'off' ? 'off' : 'on'}'`);
  }
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    PORT: String(port),
    BASE_URL: `http://127.0.0.1:${port}`,
    DATA_DIR: dataDir,
    DATABASE_URL: database.url,
    SMTP_URL: smtpUrl,
    TEMPORAL_UI_PORT: '0',
    WORKER_METRICS_ADDRESS: 'off',
    LOG_LEVEL: 'warn',
    ...SERVICE_ENV,
    ...extraEnv,
  };
  const children: Child[] = [];
  let temporal: BenchTemporal | undefined;
  const stops: Array<() => Promise<void>> = [];
  const sampler = setInterval(() => {
    for (const child of children) {
      if (child.child.pid) child.peakRssMb = Math.max(child.peakRssMb, rssMbOf(child.child.pid));
    }
  }, 250);
  const close = async () => {
    clearInterval(sampler);
    for (const child of children.reverse()) await stopChild(child.child);
    for (const s of stops.reverse()) await s();
    await orm.close(true);
    await database.drop();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    temporal = await startBenchTemporal(dataDir);
    stops.push(async () => {
      await temporal!.stop();
      await temporal!.dispose();
    });
    env.TEMPORAL_ADDRESS = temporal.address;
    if (shape === 'all-in-one') {
      const all = spawnRole('all-in-one', 'main.js', env);
      children.push(all);
      await waitForOutput(all, /Delivery service ready/, ROLE_START_MS);
    } else {
      if (shape === 'roles') {
        // BENCH_WORKERS worker processes (default 1), each with its own metrics port.
        for (let i = 0; i < Number(process.env.BENCH_WORKERS ?? 1); i += 1) {
          const worker = spawnRole(i === 0 ? 'worker' : `worker ${i + 1}`, 'temporal/worker-main.js', { ...env, WORKER_METRICS_ADDRESS: 'off' });
          children.push(worker);
          await waitForOutput(worker, /worker polling/, ROLE_START_MS);
        }
      }
      const api = spawnRole('api', 'http/server.js', shape === 'front-door' ? { ...env, DISPATCH_LOOPS: '0', DISPATCH_ORGANISATION_BACKLOG: '10000000' } : env);
      children.push(api);
      await waitForOutput(api, /API listening/, ROLE_START_MS);
    }
  } catch (error) {
    await close();
    throw error;
  }
  return {
    base: `http://127.0.0.1:${port}`,
    temporal: temporal!,
    orm,
    storage: new LocalDiskStorage(path.join(dataDir, 'files')),
    passwords: new PasswordHasher(OWASP_SCRYPT_COST),
    peakRssMb: () => Object.fromEntries(children.map((c) => [c.role, c.peakRssMb])),
    close,
  };
}
