/**
 * The cluster tier: `npm run start:cluster` as users run it (the real Temporal server on PostgreSQL,
 * two API and two worker processes, supervised), a burst of signed orders spread over both API
 * processes under faults: a worker SIGKILLed twice (the script starts it again each time), an API
 * process SIGKILLed mid-burst (started again; the sender retries as platforms do), the Temporal
 * server stopped (SIGSTOP) for 20 s while orders keep arriving, then continued. Every order is
 * fulfilled once: one purchase, one receipt, every log entry final. Needs the server binary
 * (`npm run setup:temporal -- --server`, run by pretest).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { NOTICE_SENDERS } from '../../activities/version-notifications';
import { ProductVersion } from '../../src/db/entities';
import { createOrm, type Orm } from '../../src/db/orm';
import { startDevMailbox, type DevMailbox } from '../../src/dev/dev-mailbox';
import { silentLogger } from '../../src/dev/logger';
import { temporalDatabasesOf } from '../../src/dev/temporal-cluster';
import { MAIL_CONNECTIONS } from '../../src/mail/mailer';
import { issueDownloadLink } from '../../src/services/download-links';
import { S3Storage, s3ClientOf } from '../../src/storage/s3-storage';
import { createTestDatabase, TEST_DATABASE_POOL_MAX, TEST_POOL } from '../helpers/database';
import { tokenOfLink } from '../helpers/download-links';
import { createTestBucket, s3StorageEnv, testS3Settings } from '../helpers/s3';
import { testPasswords } from '../helpers/seed';
import { insertPurchases } from '../helpers/bulk-purchases';
import { eventually, orderBody, seedWebhookOrg, send } from '../helpers/webhooks';

const ROOT = path.resolve(__dirname, '../..');
const ORDERS = 60;
/** Buyers of the product whose new version is announced: more than one run of the chain takes (2,000). */
const NOTICE_BUYERS = 2_500;
/**
 * Notices a second (UPDATE_NOTICE_RATE): the default 10 would take the run four minutes to send; the
 * chain, the kills and the once-each counting are the same at any rate.
 */
const NOTICE_RATE = 100;
/** When a worker is killed during the notices: at about a quarter, then half of them sent. */
const KILLS = [0.25, 0.5];
/** How long the engine is stopped while orders keep arriving. */
const ENGINE_STOP_MS = 20_000;

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let mailbox: DevMailbox;
let dataDir: string;
let cluster: ChildProcess;
let output = '';
let orm: Orm;
/** The cluster's product files: a bucket of its own on the run's S3 server. */
let storage: S3Storage;

beforeAll(async () => {
  database = await createTestDatabase();
  // Room for every message of the run (the notification alone sends thousands).
  mailbox = await startDevMailbox(silentLogger, { port: 0, maxMessages: 10_000 });
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'delivery-cluster-'));
  const bucket = await createTestBucket();
  storage = new S3Storage(s3ClientOf(testS3Settings()), bucket, 'files');
  cluster = spawn(process.execPath, [path.join(ROOT, 'dist/src/dev/cluster.js')], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: database.url, DATABASE_POOL_MAX: TEST_DATABASE_POOL_MAX, DATA_DIR: dataDir, SMTP_URL: mailbox.url,
      CLUSTER_API_PROCESSES: '2', CLUSTER_WORKER_PROCESSES: '2', LOG_LEVEL: 'warn', UPDATE_NOTICE_RATE: String(NOTICE_RATE), ...s3StorageEnv(bucket, 'files'),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  cluster.stdout?.on('data', (c: Buffer) => { output += c.toString(); });
  cluster.stderr?.on('data', (c: Buffer) => { output += c.toString(); });
  await eventually(async () => (/Cluster ready/.test(output) ? true : undefined), 150_000, () => `the cluster to start; it printed:\n${output}`);
  orm = await createOrm(database.url, { pool: TEST_POOL });
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

/** The API processes' URLs, from the cluster's ready lines. */
function apiUrls(): string[] {
  return [...output.matchAll(/api \d+\s+(http:\/\/localhost:\d+)/g)].map((m) => m[1]);
}

/** The pids of the cluster script's children running `script`. */
function childrenRunning(script: string): number[] {
  const listed = spawnSync('ps', ['-o', 'pid=,args=', '--ppid', String(cluster.pid)], { encoding: 'utf8' }).stdout;
  return listed.split('\n').filter((line) => line.includes(script)).map((line) => Number(line.trim().split(/\s+/)[0]));
}

/** Waits until a process of `script` runs again in the place of `gone` beside `others`; returns its pid. */
async function restarted(script: string, others: number[], gone: number): Promise<number> {
  return eventually(async () => {
    const added = childrenRunning(script).filter((pid) => !others.includes(pid));
    return added.length === 1 && added[0] !== gone ? added[0] : undefined;
  }, 60_000, `${script} started again after ${gone} was killed`);
}

/** Sends until an API process takes it: a platform retries a delivery its receiver did not answer. */
async function deliver(api: string, orgId: string, orderId: string): Promise<number> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return (await send(api, 'cart-e', orgId, orderBody('cart-e', orgId, orderId))).status;
    } catch (error) {
      if (attempt === 100) throw error;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

test(`${ORDERS} orders over two API processes under faults (worker killed twice, an API killed, the engine stopped 20 s): each fulfilled once`, async () => {
  const apis = apiUrls();
  expect(apis).toHaveLength(2);
  const workers = childrenRunning('worker-main.js');
  expect(workers).toHaveLength(2);
  const [engine] = childrenRunning('temporal-server/server');
  expect(engine).toBeGreaterThan(0);
  const org = await seedWebhookOrg({ orm, storage, passwords: testPasswords }, { platforms: ['cart-e'] });

  // The same worker slot is killed twice: first its process, then the one started in its place.
  let victim = workers[0];
  const survivor = workers[1];
  const statuses: number[] = [];
  for (let i = 0; i < ORDERS; i += 1) {
    if (i === 10 || i === 30) process.kill(victim, 'SIGKILL');
    if (i === 20) process.kill(childrenRunning('http/server.js')[1], 'SIGKILL');
    if (i === 40) process.kill(engine, 'SIGSTOP');
    statuses.push(await deliver(apis[i % 2], org.orgId, `cluster-${i}`));
    if (i === 10 || i === 30) victim = await restarted('worker-main.js', [survivor], victim);
    // While the engine is stopped, orders keep arriving, one a second, and are acknowledged.
    if (i >= 40) await new Promise((r) => setTimeout(r, ENGINE_STOP_MS / (ORDERS - 40)));
  }
  process.kill(engine, 'SIGCONT');
  expect(statuses).toEqual(Array(ORDERS).fill(200));
  expect(output).toMatch(/api \d exited \(SIGKILL\)/);
  const workerDeaths = [...output.matchAll(/(worker \d) exited \(SIGKILL\)/g)].map((m) => m[1]);
  expect(workerDeaths).toEqual([workerDeaths[0], workerDeaths[0]]);

  const em = () => orm.em.fork();
  // The engine and the restarted processes take up what the killed ones held once its timeouts pass.
  await eventually(async () => {
    const [row] = await em().execute<Array<{ n: string }>>(`select count(*) as n from webhook_delivery where organisation_id = ? and status = 'Success'`, [org.orgId]);
    return Number(row.n) === ORDERS ? true : undefined;
  }, 300_000, 'every delivery Success');
  const [counts] = await em().execute<Array<{ purchases: string; receipts: string; distinct_orders: string }>>(
    `select (select count(*) from purchase where organisation_id = ?) as purchases,
            (select count(*) from sent_email where organisation_id = ? and kind = 'receipt' and status = 'sent') as receipts,
            (select count(distinct external_order_id) from purchase where organisation_id = ?) as distinct_orders`,
    [org.orgId, org.orgId, org.orgId],
  );
  expect(counts).toEqual({ purchases: String(ORDERS), receipts: String(ORDERS), distinct_orders: String(ORDERS) });
  // One receipt per order: one Message-ID each. A receipt re-sent because its worker was killed
  // between the mail server's "accepted" and the log's "sent" carries the same one, and mail systems
  // drop it: at most one per SMTP connection of the killed worker, per kill.
  const receipts = mailbox.messages().filter((m) => m.subject.startsWith('Your download:'));
  expect(receipts.every((m) => m.messageId !== null)).toBe(true);
  expect(new Set(receipts.map((m) => m.messageId)).size).toBe(ORDERS);
  expect(receipts.length - ORDERS).toBeLessThanOrEqual(workerDeaths.length * MAIL_CONNECTIONS);
  // A receipt's link, written by a worker, opens on the cluster (the cluster gives every role one SITE_URL).
  const link = /https?:\/\/[^\s"<>]+\/d\/[^\s"<>]+/.exec(receipts[0].text)?.[0];
  expect(link).toBeDefined();
  expect(apiUrls()).toContain(new URL(link!).origin);
  const page = await fetch(link!);
  expect(page.status).toBe(200);

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
}, 480_000);

test('a download started on one API process is resumed (Range, If-Range) on the other and completes byte for byte: the files are in S3', async () => {
  const apis = apiUrls();
  const [file] = await orm.em.fork().execute<Array<{ purchase_id: string; file_id: string; storage_key: string; size: string }>>(
    `select p.id as purchase_id, f.id as file_id, f.storage_key, f.size::text as size
     from purchase p join version_file f on f.version_id = p.version_id where p.external_order_id = 'cluster-3'`,
  );
  const original = Buffer.concat(await (await storage.read(file.storage_key)).toArray());
  expect(original.length).toBe(Number(file.size));
  const { url } = await issueDownloadLink(orm.em.fork(), file.purchase_id, { siteUrl: 'http://localhost', ttlMs: 3_600_000 }, new Date());
  const filePath = `/d/${encodeURIComponent(tokenOfLink(url))}/files/${file.file_id}`;
  const half = Math.floor(original.length / 2);

  const first = await fetch(`${apis[0]}${filePath}`, { headers: { range: `bytes=0-${half - 1}` } });
  expect(first.status).toBe(206);
  const head = Buffer.from(await first.arrayBuffer());
  const rest = await fetch(`${apis[1]}${filePath}`, { headers: { range: `bytes=${half}-`, 'if-range': first.headers.get('etag')! } });
  expect(rest.status).toBe(206);
  expect(rest.headers.get('content-range')).toBe(`bytes ${half}-${original.length - 1}/${original.length}`);
  expect(Buffer.concat([head, Buffer.from(await rest.arrayBuffer())]).equals(original)).toBe(true);
  // The two pieces, served by different processes, count as one completed transfer.
  const completed = await eventually(async () => {
    const rows = await orm.em.fork().execute<Array<{ n: string }>>(
      `select count(*) as n from activity_log_entry where kind = 'file_download' and purchase_id = ? and file_id = ?`, [file.purchase_id, file.file_id]);
    return Number(rows[0].n) > 0 ? Number(rows[0].n) : undefined;
  }, 10_000, 'the completed transfer');
  expect(completed).toBe(1);
}, 60_000);

test(`notify ${NOTICE_BUYERS} buyers of a new version at ${NOTICE_RATE}/s while a worker is SIGKILLed twice: each eligible buyer emailed once`, async () => {
  const apis = apiUrls();
  const org = await seedWebhookOrg({ orm, storage, passwords: testPasswords }, { platforms: ['cart-e'] });
  const em = () => orm.em.fork();
  await insertPurchases(em(), {
    orgId: org.orgId, productId: org.course.productId, versionId: org.course.versionId, count: NOTICE_BUYERS, customers: NOTICE_BUYERS, tag: 'notify',
  });
  // Left out: a revoked purchase, a test purchase, a customer who unsubscribed from update notices.
  const [revoked, test, unsubscribed] = (await em().execute<Array<{ id: string; email: string }>>(
    `select p.id, c.email from purchase p join customer c on c.id = p.customer_id where p.product_id = ? order by c.email limit 3`,
    [org.course.productId],
  ));
  await em().execute(`update purchase set revoked_at = now(), revoke_reason = 'refund' where id = ?`, [revoked.id]);
  await em().execute('update purchase set test = true where id = ?', [test.id]);
  await em().execute('update customer set update_notices_off_at = now() where email = ? and organisation_id = ?', [unsubscribed.email, org.orgId]);
  const eligible = NOTICE_BUYERS - 3;
  const version = em().create(ProductVersion, { product: org.course.productId, version: '2.0.0' });
  await em().persistAndFlush(version);
  await em().execute('update product set active_version_id = ? where id = ?', [version.id, org.course.productId]);

  const notify = () => fetch(`${apis[0]}/api/products/${org.course.productId}/versions/${version.id}/notify`, {
    method: 'POST', headers: { authorization: `Bearer ${org.apiKey}` },
  });
  const started = await notify();
  expect(started.status).toBe(202);
  expect(await started.json()).toMatchObject({ total: eligible, status: 'running' });
  const notices = () => mailbox.messages().filter((m) => m.subject.startsWith('New version of Course Basic'));

  // Kill whichever worker slot is there, at each share of the run.
  for (const share of KILLS) {
    await eventually(async () => (notices().length >= eligible * share ? true : undefined), 600_000, `${share} of the notices`);
    const [victim, ...others] = childrenRunning('worker-main.js');
    process.kill(victim, 'SIGKILL');
    await restarted('worker-main.js', others, victim);
  }
  const progress = await eventually(async () => {
    const res = await fetch(`${apis[1]}/api/products/${org.course.productId}/notifications`, { headers: { authorization: `Bearer ${org.apiKey}` } });
    const body = (await res.json()) as { notifications: Array<{ status: string; sent: number; failed: number; left: number }> };
    return body.notifications[0]?.status === 'done' ? body.notifications[0] : undefined;
  }, 900_000, 'the notification to finish');
  expect(progress).toMatchObject({ sent: eligible, failed: 0, left: 0 });

  // One notice per eligible buyer: one Message-ID each (a notice re-sent after a crash between the
  // mail server's "accepted" and the log's "sent" would carry the same one, and mail systems drop it).
  const byRecipient = new Map<string, Set<string>>();
  for (const mail of notices()) {
    for (const to of mail.to) byRecipient.set(to, (byRecipient.get(to) ?? new Set()).add(mail.messageId ?? ''));
  }
  expect(byRecipient.size).toBe(eligible);
  expect([...byRecipient.values()].filter((ids) => ids.size !== 1)).toEqual([]);
  for (const left of [revoked, test, unsubscribed]) expect(byRecipient.has(left.email)).toBe(false);
  // A re-sent notice is one that was between the mail server's "accepted" and the log's "sent" on the
  // killed worker: at most one per sender in flight there, per kill.
  const duplicates = notices().length - eligible;
  expect(duplicates).toBeLessThanOrEqual(KILLS.length * NOTICE_SENDERS);

  // Asking again sends nothing new.
  const again = await notify();
  expect(again.status).toBe(200);
  await new Promise((r) => setTimeout(r, 2_000));
  expect(notices().length).toBe(eligible + duplicates);

  // The chain continued as new (every 2000 recipients), so no run's history grew with the list.
  const ui = /Temporal UI\s+(http:\/\/localhost:\d+)/.exec(output)![1];
  const runs = await eventually(async () => {
    const res = await fetch(`${ui}/api/v1/namespaces/default/workflows?query=${encodeURIComponent(`WorkflowId="notify/${version.id}"`)}`);
    const body = (await res.json()) as { executions?: Array<{ status: string }> };
    return (body.executions?.length ?? 0) >= 2 ? body.executions! : undefined;
  }, 30_000, 'the runs of the notification chain');
  expect(runs.map((r) => r.status)).toContain('WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW');
}, 1_200_000);

test('Ctrl-C stops the whole cluster: no process of it is left', async () => {
  const running = {
    api: childrenRunning('http/server.js'), worker: childrenRunning('worker-main.js'),
    engine: childrenRunning('temporal-server/server'), ui: childrenRunning('temporal-ui/server'),
  };
  // Both APIs and both workers (the killed ones were started again), the engine and its UI.
  expect({ api: running.api.length, worker: running.worker.length, engine: running.engine.length, ui: running.ui.length })
    .toEqual({ api: 2, worker: 2, engine: 1, ui: 1 });
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
