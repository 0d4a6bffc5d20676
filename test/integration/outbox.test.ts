/**
 * Accept = recorded (decisions §4, amended): the webhook answer waits only for PostgreSQL; the
 * outbox rows it commits are dispatched to Temporal by whichever API process claims them.
 * The harness's own app dispatches nothing here (DISPATCH_LOOPS=0), so each test decides which
 * process dispatches, and when.
 *
 * @mostly-waiting engine outages and the dispatcher's retry pauses (alone: the cores 22 % busy)
 */
import net from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../src/config';
import { createOrm, type Orm } from '../../src/db/orm';
import { Purchase, WebhookDelivery } from '../../src/db/entities';
import { BULK_DISPATCH_KINDS, type DispatchRequest, type NewDispatch } from '../../src/domain/dispatch';
import { buildApiApp } from '../../src/roles';
import { claimDueDispatches } from '../../src/services/workflow-outbox';
import { PING_DEADLINE_MS, type WorkflowStarter } from '../../src/temporal/client';
import { WorkflowDispatcher } from '../../src/temporal/dispatcher';
import { signIn } from '../helpers/dashboard';
import { startHarness, unreachableStarter, type Harness } from '../helpers/harness';
import { claimRolledBack } from '../helpers/outbox';
import { seedUser } from '../helpers/seed';
import {
  eventually,
  finalEntry,
  orderBody,
  seedWebhookOrg,
  send,
  settled,
  signedRequest,
  withEmail,
  type WebhookOrg,
} from '../helpers/webhooks';

let h: Harness;
let org: WebhookOrg;
let staff: { email: string };

beforeAll(async () => {
  h = await startHarness({
    env: { DISPATCH_LOOPS: '0' },
    mailbox: { reject: { match: (a) => a.startsWith('refused'), code: 550 } },
  });
  org = await seedWebhookOrg(h);
  staff = await seedUser(h, org.orgId, 'admin');
});
afterAll(() => h?.close());

const cartE = (orderId: string, email = 'buyer@example.com') => withEmail('cart-e', orderBody('cart-e', org.orgId, orderId), email);

function withDispatch(config: Readonly<Config>, dispatch: Partial<Config['dispatch']>): Readonly<Config> {
  return { ...config, dispatch: { ...config.dispatch, ...dispatch } };
}

/** An app as another API process would run it: the harness's database and Temporal, its own dispatcher. */
async function apiProcess(starter: WorkflowStarter = h.starter, orm: Orm = h.orm): Promise<FastifyInstance> {
  const app = await buildApiApp({ config: withDispatch(h.config, { loops: 2 }), orm, starter, storage: h.storage, clock: () => new Date() });
  await app.ready();
  return app;
}


async function outboxRows(): Promise<Array<{ workflow_id: string; attempts: number; last_error: string | null }>> {
  return h.orm.em.fork().execute('select workflow_id, attempts, last_error from workflow_dispatch where dead_at is null order by created_at');
}

async function emptyOutbox(timeoutMs = 60_000): Promise<void> {
  await eventually(async () => ((await outboxRows()).length === 0 ? true : undefined), timeoutMs, 'the outbox to drain');
}

test('a process that stopped between commit and dispatch: its rows are dispatched when an API process starts', async () => {
  const res = await send(h.app, 'cart-e', org.orgId, cartE('crash-1'));
  expect(res.status).toBe(200);
  const [row] = await outboxRows();
  expect(row.workflow_id).toContain('/cart-e/crash-1/');
  await new Promise((r) => setTimeout(r, 1_500));
  expect((await h.orm.em.fork().findOneOrFail(WebhookDelivery, res.body.deliveryIds![0])).status).toBe('Pending');

  const restarted = await apiProcess();
  try {
    const entry = await finalEntry(h, res.body.deliveryIds![0]);
    expect(entry.items.getItems().map((i) => i.outcome)).toEqual(['fulfilled']);
    await emptyOutbox();
  } finally {
    await restarted.close();
  }
});

test('Temporal out of reach: 200 at once, rows wait with their reason, /readyz shows the backlog; all fulfilled once it is back', async () => {
  const down = await apiProcess(unreachableStarter(h.config));
  const ids: string[] = [];
  try {
    for (let i = 0; i < 5; i += 1) {
      const started = Date.now();
      const res = await send(down, 'cart-e', org.orgId, cartE(`outage-${i}`));
      expect(res.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(1_000);
      ids.push(res.body.deliveryIds![0]);
    }
    const refused = await eventually(async () => {
      const rows = await outboxRows();
      return rows.length === 5 && rows.every((r) => r.attempts >= 1) ? rows : undefined;
    }, 30_000, 'every row to have been refused once');
    expect(refused[0].last_error).toBeTruthy();
    const ready = await down.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toMatchObject({ ok: true, database: true, temporal: false, outbox: { waiting: 5 } });
    const { cookie } = await signIn(down, staff.email);
    for (const url of ['/', '/webhooks-log']) {
      const page = await down.inject({ method: 'GET', url, headers: { cookie } });
      expect(page.body).toMatch(/data-testid="dispatch-backlog"[^>]*>\s*<strong>5 fulfilments are waiting for the workflow engine<\/strong>/);
    }
    for (const id of ids) expect((await h.orm.em.fork().findOneOrFail(WebhookDelivery, id)).status).toBe('Pending');
  } finally {
    await down.close();
  }
  // The stopped process wrote every answer: a start that failed gave its place in the engine back,
  // and the items wait counted as none there.
  const counted = await h.orm.em.fork().execute<Array<{ n: string }>>(
    `select count(*) as n from webhook_delivery_item where delivery_id in (select jsonb_array_elements_text(?::jsonb)::uuid) and run_started_at is not null`, [JSON.stringify(ids)]);
  expect(Number(counted[0].n)).toBe(0);

  const back = await apiProcess();
  try {
    for (const id of ids) {
      expect((await finalEntry(h, id)).items.getItems().map((i) => i.outcome)).toEqual(['fulfilled']);
    }
    await emptyOutbox();
    expect(await h.orm.em.fork().count(Purchase, { organisation: org.orgId, externalOrderId: { $like: 'outage-%' } })).toBe(5);
    expect((await back.inject({ method: 'GET', url: '/readyz' })).json()).toMatchObject({ temporal: true, outbox: { waiting: 0 } });
    const { cookie } = await signIn(back, staff.email);
    expect((await back.inject({ method: 'GET', url: '/', headers: { cookie } })).body).not.toContain('dispatch-backlog');
  } finally {
    await back.close();
  }
});

/** A dispatcher of the test's own (one loop, polling every 50 ms, no budget to speak of unless given one) over the harness's database, starting through `starter`. */
function testDispatcher(
  starter: Pick<WorkflowStarter, 'dispatch'>,
  options: { orm?: Orm; batchSize?: number; loops?: number; engineRuns?: number; runsPerOrganisation?: number; pollIntervalMs?: number; claimGapMs?: number; random?: () => number } = {},
): WorkflowDispatcher {
  return new WorkflowDispatcher({
    orm: options.orm ?? h.orm, starter, batchSize: options.batchSize ?? 10, loops: options.loops ?? 1, pollIntervalMs: options.pollIntervalMs ?? 50,
    claimGapMs: options.claimGapMs, maxRefusals: 10, random: options.random,
    runsPerOrganisation: options.runsPerOrganisation ?? options.engineRuns ?? 1000, engineRuns: options.engineRuns ?? 1000, reservedRuns: 0, fairnessWindowMs: 30_000,
    log: { warn: () => undefined, error: () => undefined },
  });
}

test('two API processes never hold the same row at once, and every row is dispatched once', async () => {
  const orders = Array.from({ length: 120 }, (_, i) => `pair-${i}`);
  const ids: string[] = [];
  for (const orderId of orders) ids.push((await send(h.app, 'cart-e', org.orgId, cartE(orderId))).body.deliveryIds![0]);

  const calls = new Map<string, number>();
  let inFlight = new Set<string>();
  let overlaps = 0;
  const counting = (orm: Orm): WorkflowDispatcher => testDispatcher({
    async dispatch(request: NewDispatch) {
      // The orders' own rows; a sent receipt's reminder row follows them into the outbox.
      if (request.kind !== 'fulfil-line') return h.starter.dispatch(request);
      if (inFlight.has(request.workflowId)) overlaps += 1;
      inFlight.add(request.workflowId);
      calls.set(request.workflowId, (calls.get(request.workflowId) ?? 0) + 1);
      try {
        await h.starter.dispatch(request);
      } finally {
        inFlight.delete(request.workflowId);
      }
    },
  }, { orm, batchSize: 7, loops: 2 });
  // Two pools, as two processes have.
  const otherOrm = await createOrm(h.config.databaseUrl!);
  const dispatchers = [counting(h.orm), counting(otherOrm)];
  try {
    dispatchers.forEach((d) => d.start());
    await emptyOutbox();
  } finally {
    await Promise.all(dispatchers.map((d) => d.stop()));
    await otherOrm.close(true);
    inFlight = new Set();
  }
  expect(overlaps).toBe(0);
  expect(calls.size).toBe(orders.length);
  expect([...calls.values()].every((n) => n === 1)).toBe(true);
  for (const id of ids) expect((await finalEntry(h, id)).status).toBe('Success');
  expect(await h.orm.em.fork().count(Purchase, { organisation: org.orgId, externalOrderId: { $like: 'pair-%' } })).toBe(orders.length);
});

test('an organisation whose starts the engine answers slowly does not hold back another organisation\'s start', async () => {
  const other = await seedWebhookOrg(h, { platforms: ['cart-e'] });
  for (let i = 0; i < 3; i += 1) await send(h.app, 'cart-e', org.orgId, cartE(`slow-${i}`));
  const slowStarts = new Set<string>();
  let releaseSlow: () => void = () => undefined;
  const slowAnswered = new Promise<void>((resolve) => { releaseSlow = resolve; });
  const startedAt = new Map<string, number>();
  const dispatcher = testDispatcher({
    async dispatch(request: NewDispatch) {
      startedAt.set(request.workflowId, Date.now());
      // The first organisation's starts hang (an engine slow to answer them) until the test lets them go.
      if (request.workflowId.includes('/cart-e/slow-')) {
        slowStarts.add(request.workflowId);
        await slowAnswered;
      }
      return h.starter.dispatch(request);
    },
  });
  dispatcher.start();
  try {
    await eventually(async () => (slowStarts.size === 3 ? true : undefined), 20_000, 'the slow organisation\'s three starts to be in flight');
    const recorded = Date.now();
    const quick = await send(h.app, 'cart-e', other.orgId, withEmail('cart-e', orderBody('cart-e', other.orgId, 'quick-1'), 'quick@example.com'));
    dispatcher.recorded(other.orgId);
    expect((await finalEntry(h, quick.body.deliveryIds![0])).status).toBe('Success');
    const quickStart = [...startedAt].find(([id]) => id.includes('/cart-e/quick-1/'))![1];
    // Well inside the slow starts, which still hang: it waited for no batch of theirs.
    expect(quickStart - recorded).toBeLessThan(2_000);
    expect(slowStarts.size).toBe(3);
    releaseSlow();
    await emptyOutbox();
  } finally {
    releaseSlow();
    await dispatcher.stop();
  }
});

/**
 * After a test whose starts only "took" runs (the runs never ran): the sales of orders `prefix…` get
 * their outcomes, freeing their places in the engine, and their rows leave the outbox.
 */
async function finishTakenRuns(prefix: string): Promise<void> {
  await h.orm.em.fork().execute(`update webhook_delivery_item set outcome = 'fulfilled' where id in
    (select wi.id from webhook_delivery_item wi join webhook_delivery wd on wd.id = wi.delivery_id where wd.external_order_id like ?)`, [`${prefix}%`]);
  await h.orm.em.fork().execute('delete from workflow_dispatch where workflow_id like ?', [`%/${prefix}%`]);
}

test('a process\'s loops claim one at a time: together they take no more of the engine\'s places than the budget', async () => {
  for (let i = 0; i < 6; i += 1) await send(h.app, 'cart-e', org.orgId, cartE(`turn-${i}`));
  const items = `select wi.id from webhook_delivery_item wi join webhook_delivery wd on wd.id = wi.delivery_id where wd.external_order_id like 'turn-%'`;
  const started: string[] = [];
  // Starts that "take" each run without running it: its place stays taken, as a run's does until its outcome.
  const dispatcher = testDispatcher({ dispatch: async (request: NewDispatch) => { started.push(request.workflowId); } }, { loops: 2, engineRuns: 2 });
  const waitingOnItems = `select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query like '%workflow_dispatch%'`;
  try {
    // The sales' items locked meanwhile: a claim that took rows waits to mark them, its places not yet counted by others.
    await h.orm.em.fork().transactional(async (tx) => {
      await tx.execute(`${items} for update of wi`);
      dispatcher.start();
      await eventually(async () => (Number((await h.orm.em.fork().execute<Array<{ n: string }>>(waitingOnItems))[0].n) >= 1 ? true : undefined), 10_000, 'a claim to wait on the items');
      await new Promise((resolve) => setTimeout(resolve, 500)); // the other loop's claim, had it gone ahead, waits too by now
    });
    await eventually(async () => (started.length >= 2 ? true : undefined), 10_000, 'the first claim\'s starts');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(started).toHaveLength(2);
  } finally {
    await dispatcher.stop();
    await finishTakenRuns('turn-');
  }
});

test('a sale of an organisation with a place is claimed as it comes, gap or not; one of an organisation holding all its places waits for a place to free', async () => {
  const other = await seedWebhookOrg(h, { platforms: ['cart-e'] });
  const started: string[] = [];
  // Starts that "take" each run without running it: its place stays taken. One place per organisation;
  // no poll and no gap within the test's time, so only what the dispatcher is told wakes it.
  const dispatcher = testDispatcher({ dispatch: async (request: NewDispatch) => { if (request.workflowId.includes('/cart-e/gap-')) started.push(request.workflowId); } },
    { runsPerOrganisation: 1, pollIntervalMs: 600_000, claimGapMs: 600_000 });
  const sale = async (owner: WebhookOrg, orderId: string) => {
    await send(h.app, 'cart-e', owner.orgId, withEmail('cart-e', orderBody('cart-e', owner.orgId, orderId), `${orderId}@example.com`));
    dispatcher.recorded(owner.orgId);
  };
  try {
    await sale(org, 'gap-held-1');
    dispatcher.start();
    await eventually(async () => (started.length === 1 ? true : undefined), 10_000, 'the first sale\'s start');
    // That claim found fewer rows than it had room for: the next waits out the gap, unless a sale with a place comes.
    await sale(org, 'gap-held-2');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(started).toHaveLength(1); // its organisation holds its one place
    await sale(other, 'gap-free-1');
    await eventually(async () => (started.length === 2 ? true : undefined), 10_000, 'the other organisation\'s sale to start within the gap');
    expect(started[1]).toContain('/cart-e/gap-free-1/');
  } finally {
    await dispatcher.stop();
    await finishTakenRuns('gap-');
  }
});

test('rows a process held when it died (its lease committed, no answer written) are started by another once the lease ends, and count as runs in the engine meanwhile', async () => {
  const res = await send(h.app, 'cart-e', org.orgId, cartE('orphan-1'));
  const leaseMs = 3_000;
  const { rows: [held] } = await claimDueDispatches(h.orm.em.fork(), 10, { runsPerOrganisation: 1000, engineRuns: 1000, reservedRuns: 0, fairnessWindowMs: 30_000 }, leaseMs);
  const leasedAt = Date.now();
  expect(held.workflowId).toContain('/cart-e/orphan-1/');
  const inEngine = () => h.orm.em.fork().execute<Array<{ n: string }>>(
    'select count(*) as n from webhook_delivery_item where delivery_id = ? and run_started_at is not null and outcome is null', [res.body.deliveryIds![0]]);
  expect(Number((await inEngine())[0].n)).toBe(1);

  const starts: number[] = [];
  const dispatcher = testDispatcher({ dispatch: (request: NewDispatch) => { if (request.kind === 'fulfil-line') starts.push(Date.now()); return h.starter.dispatch(request); } });
  dispatcher.start();
  try {
    expect((await finalEntry(h, res.body.deliveryIds![0])).items.getItems().map((i) => i.outcome)).toEqual(['fulfilled']);
    await emptyOutbox();
  } finally {
    await dispatcher.stop();
  }
  expect(starts).toHaveLength(1);
  expect(starts[0] - leasedAt).toBeGreaterThanOrEqual(leaseMs - 100);
});

/** Records a delivery, keeps a copy of its outbox row, and lets a process dispatch it to the end. */
async function deliveredWithRow(orderId: string, email: string): Promise<{ deliveryId: string; row: NewDispatch }> {
  const res = await send(h.app, 'cart-e', org.orgId, cartE(orderId, email));
  const [row] = await h.orm.em.fork().execute<Array<{ kind: DispatchRequest['kind']; workflow_id: string; payload: never }>>(
    'select kind, workflow_id, payload from workflow_dispatch where workflow_id like ?', [`%/${orderId}/%`],
  );
  const app = await apiProcess();
  try {
    await finalEntry(h, res.body.deliveryIds![0]);
    await settled(h, res.body.deliveryIds![0]);
    await emptyOutbox();
  } finally {
    await app.close();
  }
  return { deliveryId: res.body.deliveryIds![0], row: { kind: row.kind, workflowId: row.workflow_id, orgId: org.orgId, payload: row.payload } as NewDispatch };
}

test('a row dispatched again after its run finished (a crash before the delete) changes nothing', async () => {
  const email = 'twice@example.com';
  const { deliveryId, row } = await deliveredWithRow('twice-1', email);
  const before = await h.orm.em.fork().findOneOrFail(WebhookDelivery, deliveryId, { populate: ['items'] });
  expect(before.items.getItems().map((i) => i.outcome)).toEqual(['fulfilled']);

  await h.starter.dispatch(row);
  await h.temporal.workflow.getHandle(row.workflowId).result();
  const after = await h.orm.em.fork().findOneOrFail(WebhookDelivery, deliveryId, { populate: ['items'] });
  expect(after.status).toBe('Success');
  expect(after.items.getItems().map((i) => i.outcome)).toEqual(['fulfilled']);
  expect(await h.orm.em.fork().count(Purchase, { organisation: org.orgId, externalOrderId: 'twice-1' })).toBe(1);
  expect(h.mailbox.messages().filter((m) => m.to.includes(email))).toHaveLength(1);
});

test('a row dispatched again after its receipt failed does not re-send it (only a new delivery does)', async () => {
  const email = 'refused-twice@example.com';
  const { deliveryId, row } = await deliveredWithRow('twice-2', email);
  expect((await h.orm.em.fork().findOneOrFail(WebhookDelivery, deliveryId)).status).toBe('Error');
  const attempts = h.mailbox.rejections().filter((r) => r.address === email).length;
  expect(attempts).toBe(1);

  await h.starter.dispatch(row);
  await h.temporal.workflow.getHandle(row.workflowId).result();
  expect(h.mailbox.rejections().filter((r) => r.address === email)).toHaveLength(1);
  const after = await h.orm.em.fork().findOneOrFail(WebhookDelivery, deliveryId, { populate: ['items'] });
  expect(after.items.getItems().map((i) => i.outcome)).toEqual(['error']);
});

test('over its share of the in-flight limit a delivery is refused at once with 503 and Retry-After, nothing is recorded for it, and another organisation is still accepted', async () => {
  const other = await seedWebhookOrg(h);
  const app = await buildApiApp({
    config: { ...withDispatch(h.config, { loops: 0 }), webhookMaxInFlight: 4 },
    orm: h.orm, starter: h.starter, storage: h.storage, clock: () => new Date(),
  });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = new URL(base);
  const sockets: net.Socket[] = [];
  try {
    // Two deliveries whose bodies are still arriving hold the organisation's share (half of 4).
    const held = ['shed-1', 'shed-2'].map((orderId) => {
      const request = signedRequest('cart-e', org.orgId, cartE(orderId));
      const socket = net.connect(Number(port), '127.0.0.1');
      sockets.push(socket);
      const head = `POST ${request.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${request.body.length}\r\n`
        + `${Object.entries(request.headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}Connection: close\r\n\r\n`;
      socket.write(head);
      socket.write(request.body.subarray(0, 10));
      let answer = '';
      socket.on('data', (chunk) => { answer += chunk.toString(); });
      return { socket, rest: request.body.subarray(10), answer: new Promise<string>((resolve) => socket.on('end', () => resolve(answer))) };
    });
    await eventually(async () => (held.every((r) => r.socket.bytesWritten > 0) ? true : undefined), 5_000, 'both requests to be sent');
    await new Promise((r) => setTimeout(r, 200));

    const started = Date.now();
    const refused = await send(base, 'cart-e', org.orgId, cartE('shed-3'));
    expect(Date.now() - started).toBeLessThan(500);
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatch(/retry/);
    const otherOrganisation = await send(base, 'cart-e', other.orgId, withEmail('cart-e', orderBody('cart-e', other.orgId, 'shed-other'), 'buyer@example.com'));
    expect(otherOrganisation.status).toBe(200);

    for (const r of held) r.socket.write(r.rest);
    for (const answer of await Promise.all(held.map((r) => r.answer))) expect(answer).toMatch(/^HTTP\/1\.1 200/);
    const after = await send(base, 'cart-e', org.orgId, cartE('shed-3'));
    expect(after.status).toBe(200);
    const entries = await h.orm.em.fork().find(WebhookDelivery, { organisation: org.orgId, externalOrderId: { $like: 'shed-%' } });
    expect(entries.map((e) => e.externalOrderId).sort()).toEqual(['shed-1', 'shed-2', 'shed-3']);
  } finally {
    sockets.forEach((s) => s.destroy());
    await app.close();
  }
});

test('a delivery that cannot be recorded (every database connection busy) is answered 503 within about a second', async () => {
  const tiny = await createOrm(h.config.databaseUrl!, { pool: { min: 0, max: 1, acquireTimeoutMillis: 1_000 } });
  const app = await apiProcess(h.starter, tiny);
  try {
    const hold = tiny.em.fork().execute('select pg_sleep(3)');
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    const res = await send(app, 'cart-e', org.orgId, cartE('busy-1'));
    const elapsed = Date.now() - started;
    expect(res.status).toBe(503);
    expect(elapsed).toBeLessThan(1_500);
    await hold;
    expect(await h.orm.em.fork().count(WebhookDelivery, { organisation: org.orgId, externalOrderId: 'busy-1' })).toBe(0);
  } finally {
    await app.close();
    await tiny.close(true);
  }
});

test('the engine\'s answers the database could not take at first are written once it can, not left to the rows\' lease', async () => {
  const res = await send(h.app, 'cart-e', org.orgId, cartE('answer-later-1'));
  const tiny = await createOrm(h.config.databaseUrl!, { pool: { min: 0, max: 1, acquireTimeoutMillis: 1_000 } });
  let claimed = false;
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => { release = resolve; });
  const dispatcher = testDispatcher({
    async dispatch(request: NewDispatch) {
      claimed = true;
      await released;
      return h.starter.dispatch(request);
    },
  }, { orm: tiny });
  dispatcher.start();
  try {
    await eventually(async () => (claimed ? true : undefined), 20_000, 'the row to be claimed');
    // The one connection stays busy past the write's one-second wait for it: the first write of the
    // engine's answer fails.
    const hold = tiny.em.fork().execute('select pg_sleep(2.5)');
    await new Promise((r) => setTimeout(r, 100));
    release();
    await hold;
    // Left to its lease, the row would wait 30 s and be started again.
    await emptyOutbox(10_000);
    expect((await finalEntry(h, res.body.deliveryIds![0])).status).toBe('Success');
  } finally {
    await dispatcher.stop();
    await tiny.close(true);
  }
});

test('after a long engine outage, waiting rows are started within seconds of its return, not after their backoff', async () => {
  const res = await send(h.app, 'cart-e', org.orgId, cartE('long-outage-1'));
  // As after some minutes of outage: the row has failed many times, so its backoff alone would now
  // push it back by 30 s (no spread here).
  await h.orm.em.fork().execute('update workflow_dispatch set attempts = 12 where workflow_id like ?', ['%/cart-e/long-outage-1/%']);
  let engineBack = false;
  const down = unreachableStarter(h.config);
  const dispatcher = testDispatcher({ dispatch: (request: NewDispatch) => (engineBack ? h.starter : down).dispatch(request) }, { random: () => 0.5 });
  dispatcher.start();
  try {
    const [postponed] = await eventually(async () => {
      const rows = await outboxRows();
      return rows.length === 1 && rows[0].attempts === 13 ? rows : undefined;
    }, 30_000, 'the row to be tried while the engine is out of reach');
    expect(postponed.last_error).toBeTruthy();
    engineBack = true;
    await emptyOutbox(12_000);
    expect((await finalEntry(h, res.body.deliveryIds![0])).status).toBe('Success');
  } finally {
    await dispatcher.stop();
  }
});

test('a row Temporal refuses for good is a dead letter at once: its item ends error with the reason, its entry Error, the alert goes; other rows go on', async () => {
  const refused = await send(h.app, 'cart-e', org.orgId, cartE('dead-1', 'dead-letter@example.com'));
  // As a process of the previous version recorded it: the order id in full, past the engine's 255 bytes.
  const tooLong = `fulfil/${org.orgId}/cart-e/${'dead-1-'.padEnd(220, 'x')}/${org.ebook.productId}`;
  await h.orm.em.fork().execute('update workflow_dispatch set workflow_id = ? where workflow_id like ?', [tooLong, '%/cart-e/dead-1/%']);
  const fine = await send(h.app, 'cart-e', org.orgId, cartE('dead-2', 'alive@example.com'));

  const app = await apiProcess();
  try {
    const entry = await finalEntry(h, refused.body.deliveryIds![0]);
    expect(entry.status).toBe('Error');
    expect(entry.items.getItems().map((i) => [i.outcome, i.reason])).toEqual([['error', expect.stringMatching(/^the workflow engine refused this run: .*WorkflowId/)]]);
    await h.mailbox.waitFor((m) => m.subject === 'Order dead-1 from cart-e could not be fulfilled', 20_000);
    expect((await finalEntry(h, fine.body.deliveryIds![0])).status).toBe('Success');
    await emptyOutbox();

    const [dead] = await h.orm.em.fork().execute<Array<{ attempts: number; last_error: string }>>(
      'select attempts, last_error from workflow_dispatch where dead_at is not null and workflow_id = ?', [tooLong],
    );
    expect(dead).toMatchObject({ attempts: 1, last_error: expect.stringMatching(/WorkflowId/) });
    expect((await app.inject({ method: 'GET', url: '/readyz' })).json()).toMatchObject({ outbox: { waiting: 0, deadLetters: 1 } });
    expect((await app.inject({ method: 'GET', url: '/metrics' })).body).toMatch(/^delivery_outbox_dead_letters 1$/m);
  } finally {
    await app.close();
  }
});

test('an organisation with DISPATCH_ORGANISATION_BACKLOG rows waiting is answered 503 with Retry-After; another organisation is not', async () => {
  const other = await seedWebhookOrg(h, { platforms: ['cart-e'] });
  const app = await buildApiApp({
    config: { ...withDispatch(h.config, { loops: 0 }), organisationBacklog: 2 },
    orm: h.orm, starter: h.starter, storage: h.storage, clock: () => new Date(),
  });
  const deliver = async (orgId: string, orderId: string) => {
    const request = signedRequest('cart-e', orgId, withEmail('cart-e', orderBody('cart-e', orgId, orderId), 'capped@example.com'));
    return app.inject({ method: 'POST', url: request.path, headers: request.headers, payload: request.body });
  };
  try {
    expect((await deliver(org.orgId, 'cap-1')).statusCode).toBe(200);
    expect((await deliver(org.orgId, 'cap-2')).statusCode).toBe(200);
    const full = await deliver(org.orgId, 'cap-3');
    expect(full.statusCode).toBe(503);
    expect(full.headers['retry-after']).toBe('30');
    expect(full.json().error).toMatch(/retry/);
    expect((await deliver(other.orgId, 'cap-other')).statusCode).toBe(200);
  } finally {
    await app.close();
  }
  const dispatching = await apiProcess();
  try {
    await emptyOutbox();
  } finally {
    await dispatching.close();
  }
  expect(await h.orm.em.fork().count(WebhookDelivery, { externalOrderId: { $like: 'cap-%' } })).toBe(3);
});


test('an organisation\'s bulk rows (its integrators\' events, notices, reminders) are claimed after its sales, however old, and do not count toward its backlog cap', async () => {
  const lanes = await seedWebhookOrg(h, { platforms: ['cart-e'] });
  // Bulk rows an hour old (payloads a claim does not read): more of them than the cap below.
  await h.orm.em.fork().execute(`insert into workflow_dispatch (id, organisation_id, kind, workflow_id, payload, created_at, due_at, attempts)
    select gen_random_uuid(), ?, k, 'bulk-' || k, '{}'::jsonb, now(), now() - interval '1 hour', 0 from jsonb_array_elements_text(?::jsonb) k`, [lanes.orgId, JSON.stringify(BULK_DISPATCH_KINDS)]);
  const app = await buildApiApp({
    config: { ...withDispatch(h.config, { loops: 0 }), organisationBacklog: 2 },
    orm: h.orm, starter: h.starter, storage: h.storage, clock: () => new Date(),
  });
  try {
    const request = signedRequest('cart-e', lanes.orgId, withEmail('cart-e', orderBody('cart-e', lanes.orgId, 'lane-sale'), 'lanes@example.com'));
    expect((await app.inject({ method: 'POST', url: request.path, headers: request.headers, payload: request.body })).statusCode).toBe(200);
  } finally {
    await app.close();
  }
  // Each claim's lease is rolled back, so the next one finds the same rows due.
  const claimKinds = async (runsPerOrganisation: number) => (await claimRolledBack(h.orm, 100, { runsPerOrganisation, engineRuns: 100, reservedRuns: 0, fairnessWindowMs: 30_000 })).rows
    .filter((c) => c.orgId === lanes.orgId).map((c) => c.kind);
  expect(await claimKinds(1)).toEqual(['fulfil-line']);
  // The bulk rows are all due at the same instant: their order among themselves is the database's.
  const [sale, ...bulk] = await claimKinds(10);
  expect([sale, bulk.sort()]).toEqual(['fulfil-line', [...BULK_DISPATCH_KINDS].sort()]);

  await h.orm.em.fork().execute(`delete from workflow_dispatch where workflow_id like 'bulk-%'`);
  const dispatching = await apiProcess();
  try {
    await emptyOutbox();
  } finally {
    await dispatching.close();
  }
});

test('the readiness ping of an engine out of reach ends by its deadline, leaving no retry to outlive the request (a retry firing after the connection closed crashed a stopping process)', async () => {
  const down = unreachableStarter(h.config);
  const started = Date.now();
  await expect(down.ping()).rejects.toThrow();
  // The SDK's retries alone run about 20 s (10 attempts, up to 5 s apart); the ping's deadline is 3 s,
  // and one backoff may be pending when it passes.
  expect(Date.now() - started).toBeLessThan(PING_DEADLINE_MS + 5_000);
}, 30_000);
