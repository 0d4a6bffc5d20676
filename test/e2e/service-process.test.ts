import { execFile, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../src/dev/ports';
import { LISTENING_SOCKETS } from '../../src/http/listen';
import { exitOf, spawnWatched, waitForOutput, type WatchedChild } from '../../src/dev/child-processes';
import { startHarness, type Harness } from '../helpers/harness';
import { listeningSockets } from '../helpers/listening-sockets';
import { seedProduct } from '../helpers/seed';
import { orderBody, seedWebhookOrg, send } from '../helpers/webhooks';
import { WebhookDelivery } from '../../src/db/entities';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');

let h: Harness;
let dataDir: string;
let env: NodeJS.ProcessEnv;
let workerMetrics: string;

beforeAll(async () => {
  h = await startHarness({ worker: false });
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'delivery-e2e-'));
  const port = await freePort();
  workerMetrics = `127.0.0.1:${await freePort()}`;
  env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    PORT: String(port),
    BASE_URL: `http://127.0.0.1:${port}`,
    DATA_DIR: dataDir,
    DATABASE_URL: h.config.databaseUrl,
    DATABASE_POOL_MAX: String(h.config.databasePoolMax),
    TEMPORAL_ADDRESS: h.config.temporal.address,
    TEMPORAL_TASK_QUEUE: h.config.temporal.taskQueue,
    SMTP_URL: h.mailbox.url,
    WORKER_METRICS_ADDRESS: workerMetrics,
    LOG_LEVEL: 'warn',
  };
}, 180_000);
const spawned: ChildProcess[] = [];
afterAll(async () => {
  // A test that times out never reaches its finally: no child may outlive the run.
  for (const child of spawned) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await h?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

function start(script: string, extraEnv: NodeJS.ProcessEnv = {}): WatchedChild {
  const started = spawnWatched(process.execPath, [path.join(ROOT, 'dist/src', script)], { cwd: ROOT, env: { ...env, ...extraEnv } });
  spawned.push(started.child);
  return started;
}

/** Exit status 0 after SIGTERM; otherwise fails with what the process last wrote (the status alone says nothing). */
async function expectCleanExit(started: WatchedChild): Promise<void> {
  const code = await exitOf(started.child);
  if (code !== 0) throw new Error(`exited with ${code}; its last output:\n${started.output().slice(-8_000)}`);
}

test('npm start with every variable set starts nothing embedded, sells through Temporal and stops on SIGTERM', async () => {
  // A relay's password is never printed (the dev mailbox takes any).
  const smtpUrl = new URL(env.SMTP_URL!);
  Object.assign(smtpUrl, { username: 'shop', password: 'relay-s3cret' });
  const service = start('main.js', { SMTP_URL: smtpUrl.toString() });
  try {
    await waitForOutput(service, /Delivery service ready/);
    expect(service.output()).toContain('external (DATABASE_URL)');
    expect(service.output()).toContain('external cluster');
    expect(service.output()).toContain('external SMTP smtp://shop:[redacted]@');
    expect(service.output()).not.toContain('relay-s3cret');
    expect(existsSync(path.join(dataDir, 'postgres'))).toBe(false);
    expect(existsSync(path.join(dataDir, 'temporal.sqlite'))).toBe(false);

    // Through npm, as the README says: the build check before it must keep stdout to one JSON line.
    const cli = await run('npm', [
      'run', '--silent', 'cli', '--', 'org', 'create', '--name', 'E2E Shop', '--owner-email', 'owner@e2e.test', '--owner-password', 'a long password',
    ], { cwd: ROOT, env });
    const lines = cli.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const org = JSON.parse(lines[0]) as { orgId: string; userId: string; apiKey: string };
    expect(Object.keys(org).sort()).toEqual(['apiKey', 'orgId', 'userId']);

    const product = await seedProduct(h, org.orgId, { name: 'E2E Ebook' });
    expect((await fetch(`${env.BASE_URL}/readyz`)).status).toBe(200);
    const res = await fetch(`${env.BASE_URL}/api/purchases`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.apiKey}` },
      body: new URLSearchParams({
        customerId: 'new', 'newCustomer.name': 'Eve', 'newCustomer.email': 'eve@e2e.test',
        productId: product.productId, amount: '12.50', currency: 'EUR', paymentMethod: 'custom', sendEmail: 'true',
      }),
    });
    expect(res.status).toBe(201);
    expect(await res.text()).toMatch(/data-purchase-id="[0-9a-f-]{36}"/);
    // The whole suite runs beside this one (the cluster tier takes both cores for minutes): a late
    // receipt says what the service logged, so a failure names its cause instead of "no mail".
    const mail = await h.mailbox.waitFor((m) => m.to.includes('eve@e2e.test'), 90_000).catch((error: Error) => {
      throw new Error(`${error.message}\nthe service printed:\n${service.output().slice(-8_000)}`);
    });
    expect(mail.text).toContain(`${env.BASE_URL}/d/`);

    // Both roles' metrics, from the one process: the API's, and the worker's through the SDK's exporter.
    const api = await (await fetch(`${env.BASE_URL}/metrics`)).text();
    expect(api).toMatch(/http_request_duration_seconds_count\{[^}]*route="\/api\/purchases"/);
    const worker = await (await fetch(`http://${workerMetrics}/metrics`)).text();
    expect(worker).toMatch(/^temporal_/m);
    expect(worker).toMatch(/^delivery_receipt_send_seconds_count\{/m);
  } finally {
    service.child.kill('SIGTERM');
    await expectCleanExit(service);
  }
}, 180_000);

test.each([
  ['http/server.js', {}, 'DATABASE_URL'],
  ['http/server.js', { DATABASE_URL: 'postgres://x@127.0.0.1:1/x' }, 'TEMPORAL_ADDRESS'],
  ['temporal/worker-main.js', { SMTP_URL: '' }, 'SMTP_URL'],
])('the production role %s refuses to start without its variables', async (script, extra, variable) => {
  const missing = { DATABASE_URL: '', TEMPORAL_ADDRESS: '', SMTP_URL: '', ...extra };
  if (variable === 'SMTP_URL') Object.assign(missing, { DATABASE_URL: env.DATABASE_URL, TEMPORAL_ADDRESS: env.TEMPORAL_ADDRESS });
  const role = start(script, missing);
  expect(await exitOf(role.child)).not.toBe(0);
  expect(role.output()).toContain(`${variable} is not set`);
});

test('a worker whose metrics address is taken stops at start, naming WORKER_METRICS_ADDRESS', async () => {
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  try {
    const taken = `127.0.0.1:${(holder.address() as { port: number }).port}`;
    const worker = start('temporal/worker-main.js', { WORKER_METRICS_ADDRESS: taken });
    expect(await exitOf(worker.child)).not.toBe(0);
    expect(worker.output()).toContain(`WORKER_METRICS_ADDRESS ${taken}`);
  } finally {
    holder.close();
  }
});

test('the api and worker roles run separately and stop cleanly on SIGTERM', async () => {
  const worker = start('temporal/worker-main.js');
  const api = start('http/server.js');
  try {
    await waitForOutput(worker, /worker polling/);
    await waitForOutput(api, /API listening/);
    expect((await fetch(`${env.BASE_URL}/readyz`)).status).toBe(200);
  } finally {
    api.child.kill('SIGTERM');
    worker.child.kill('SIGTERM');
    await expectCleanExit(api);
    await expectCleanExit(worker);
  }
});

test('the api role starts, is ready and accepts a delivery while Temporal is out of reach', async () => {
  const org = await seedWebhookOrg(h);
  const api = start('http/server.js', { TEMPORAL_ADDRESS: '127.0.0.1:1' });
  try {
    await waitForOutput(api, /API listening/);
    expect((await fetch(`${env.BASE_URL}/healthz`)).status).toBe(200);
    const ready = await fetch(`${env.BASE_URL}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ ok: true, database: true, temporal: false });
    const delivery = await send(env.BASE_URL!, 'cart-e', org.orgId, orderBody('cart-e', org.orgId, 'while-down'));
    expect(delivery.status).toBe(200);
    const entry = await h.orm.em.fork().findOneOrFail(WebhookDelivery, delivery.body.deliveryIds![0]);
    expect(entry.status).toBe('Pending');
  } finally {
    api.child.kill('SIGTERM');
    await expectCleanExit(api);
  }
});


test('the api role accepts on several sockets of its port, and a second process cannot take a share of it', async () => {
  const api = start('http/server.js', { TEMPORAL_ADDRESS: '127.0.0.1:1' });
  try {
    await waitForOutput(api, /API listening/);
    expect(listeningSockets(Number(env.PORT))).toHaveLength(LISTENING_SOCKETS);
    const second = start('http/server.js', { TEMPORAL_ADDRESS: '127.0.0.1:1' });
    expect(await exitOf(second.child)).not.toBe(0);
    expect(second.output()).toContain('EADDRINUSE');
    expect(listeningSockets(Number(env.PORT))).toHaveLength(LISTENING_SOCKETS);
    // Every socket's connections reach the one server; those left open (keep-alive) do not hold up its stop.
    const answers = await Promise.all(Array.from({ length: 40 }, () => fetch(`${env.BASE_URL}/healthz`)));
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
  } finally {
    api.child.kill('SIGTERM');
    await expectCleanExit(api);
  }
});
