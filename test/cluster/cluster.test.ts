/**
 * The cluster tier: `npm run start:cluster` as users run it (the real Temporal server on PostgreSQL,
 * two API and two worker processes), a burst of signed orders spread over both API processes, one
 * worker SIGKILLed mid-burst. Every order is fulfilled once: one purchase, one receipt, every log
 * entry final. Needs the server binary (`npm run setup:temporal -- --server`, run by pretest).
 */
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createOrm, type Orm } from '../../src/db/orm';
import { startDevMailbox, type DevMailbox } from '../../src/dev/dev-mailbox';
import { silentLogger } from '../../src/dev/logger';
import { temporalDatabasesOf } from '../../src/dev/temporal-cluster';
import { LocalDiskStorage } from '../../src/storage/local-disk-storage';
import { createTestDatabase } from '../helpers/database';
import { eventually, orderBody, seedWebhookOrg, send } from '../helpers/webhooks';

const ROOT = path.resolve(__dirname, '../..');
const ORDERS = 40;

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let mailbox: DevMailbox;
let dataDir: string;
let cluster: ChildProcess;
let output = '';
let orm: Orm;

beforeAll(async () => {
  await promisify(execFile)(process.execPath, ['scripts/build-if-stale.js'], { cwd: ROOT });
  database = await createTestDatabase();
  mailbox = await startDevMailbox(silentLogger, { port: 0 });
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'delivery-cluster-'));
  cluster = spawn(process.execPath, [path.join(ROOT, 'dist/src/dev/cluster.js')], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: database.url, DATA_DIR: dataDir, SMTP_URL: mailbox.url,
      CLUSTER_API_PROCESSES: '2', CLUSTER_WORKER_PROCESSES: '2', LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  cluster.stdout?.on('data', (c: Buffer) => { output += c.toString(); });
  cluster.stderr?.on('data', (c: Buffer) => { output += c.toString(); });
  await eventually(async () => (/Cluster ready/.test(output) ? true : undefined), 150_000, `the cluster to start:\n${output}`);
  orm = await createOrm(database.url);
}, 240_000);

afterAll(async () => {
  if (cluster && cluster.exitCode === null) {
    cluster.kill('SIGINT');
    await new Promise((resolve) => cluster.once('exit', resolve));
  }
  if (orm) {
    // The engine's databases beside the service's (start:cluster makes them), then the service's.
    for (const name of Object.values(temporalDatabasesOf(database.url))) await orm.em.fork().execute(`drop database if exists "${name}" with (force)`);
    await orm.close(true);
  }
  await mailbox?.stop();
  await database?.drop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
}, 120_000);

/** The pids of the cluster script's children running `script`. */
function childrenRunning(script: string): number[] {
  const listed = spawnSync('ps', ['-o', 'pid=,args=', '--ppid', String(cluster.pid)], { encoding: 'utf8' }).stdout;
  return listed.split('\n').filter((line) => line.includes(script)).map((line) => Number(line.trim().split(/\s+/)[0]));
}

test(`${ORDERS} orders over two API processes, a worker SIGKILLed mid-burst: each fulfilled once`, async () => {
  const apis = [...output.matchAll(/api \d+\s+(http:\/\/localhost:\d+)/g)].map((m) => m[1]);
  expect(apis).toHaveLength(2);
  const workers = childrenRunning('worker-main.js');
  expect(workers).toHaveLength(2);
  const org = await seedWebhookOrg({ orm, storage: new LocalDiskStorage(path.join(dataDir, 'files')) }, { platforms: ['cart-e'] });

  for (let i = 0; i < ORDERS; i += 1) {
    if (i === ORDERS / 2) process.kill(workers[0], 'SIGKILL');
    const res = await send(apis[i % 2], 'cart-e', org.orgId, orderBody('cart-e', org.orgId, `cluster-${i}`));
    expect(res.status).toBe(200);
  }

  const em = () => orm.em.fork();
  // The surviving worker takes over the killed one's tasks once their timeouts pass.
  await eventually(async () => {
    const [row] = await em().execute<Array<{ n: string }>>(`select count(*) as n from webhook_delivery where organisation_id = ? and status = 'Success'`, [org.orgId]);
    return Number(row.n) === ORDERS ? true : undefined;
  }, 240_000, 'every delivery Success');
  const [counts] = await em().execute<Array<{ purchases: string; receipts: string; distinct_orders: string }>>(
    `select (select count(*) from purchase where organisation_id = ?) as purchases,
            (select count(*) from sent_email where organisation_id = ? and kind = 'receipt' and status = 'sent') as receipts,
            (select count(distinct external_order_id) from purchase where organisation_id = ?) as distinct_orders`,
    [org.orgId, org.orgId, org.orgId],
  );
  expect(counts).toEqual({ purchases: String(ORDERS), receipts: String(ORDERS), distinct_orders: String(ORDERS) });
  expect(mailbox.messages().filter((m) => m.subject.startsWith('Your download:')).length).toBe(ORDERS);

  // The cluster's Temporal UI lists them, found by the service's search attributes.
  const ui = /Temporal UI\s+(http:\/\/localhost:\d+)/.exec(output)?.[1];
  expect(ui).toBeDefined();
  const query = encodeURIComponent(`OrgId="${org.orgId}" AND Platform="cart-e" AND OrderId="cluster-7"`);
  const found = await eventually(async () => {
    const res = await fetch(`${ui}/api/v1/namespaces/default/workflows?query=${query}`);
    const body = (await res.json()) as { executions?: Array<{ execution: { workflowId: string } }> };
    return body.executions?.length ? body.executions : undefined;
  }, 30_000, 'the workflow in the UI');
  expect(found.map((e) => e.execution.workflowId)).toEqual([expect.stringContaining(`/cart-e/cluster-7/`)]);
}, 360_000);

test('Ctrl-C stops the whole cluster: no process of it is left', async () => {
  const running = {
    api: childrenRunning('http/server.js'), worker: childrenRunning('worker-main.js'),
    engine: childrenRunning('temporal-server/server'), ui: childrenRunning('temporal-ui/server'),
  };
  // Both APIs, the engine and its UI; one worker or two (the first test kills one, not restarted).
  expect({ api: running.api.length, engine: running.engine.length, ui: running.ui.length }).toEqual({ api: 2, engine: 1, ui: 1 });
  expect(running.worker.length).toBeGreaterThanOrEqual(1);
  const pids = Object.values(running).flat();
  cluster.kill('SIGINT');
  await new Promise((resolve) => cluster.once('exit', resolve));
  const alive = pids.filter((pid) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  });
  expect(alive).toEqual([]);
}, 120_000);
