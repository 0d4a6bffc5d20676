/**
 * Security review H1 (issue 23): one organisation's flood must delay only itself. Organisation A
 * sends 2,000 orders whose ids are as long as the intake accepts (200 characters: a workflow id of
 * about 300 bytes, past the engine's `limit.maxIDLength` of 255 that the test server sets as
 * compose does); organisation B's sale, sent right after, gets its receipt while most of A's flood
 * still waits (measured in A's own progress, not in seconds, so a busy machine slows both alike).
 * DISPATCH_ORGANISATION_RUNS is set for the test machine (two cores shared with other test runs):
 * what A has in the engine at once is what B's run finds ahead of it there.
 */
import { WebhookDelivery, WebhookDeliveryItem } from '../../src/db/entities';
import { RECEIPT_RETRYING_REASON } from '../../src/domain/fulfilment';
import { WAITING_FOR_KEY_REASON } from '../../src/domain/license-keys';
import { claimDueDispatches } from '../../src/services/workflow-outbox';
import { CLAIM_LEASE_MS } from '../../src/temporal/dispatcher';
import { FREED_PLACES_APPLICATION } from '../../src/temporal/engine-places';
import { startHarness, type Harness } from '../helpers/harness';
import { claimRolledBack } from '../helpers/outbox';
import { workerProcesses } from '../helpers/worker-process';
import { eventually, orderBody, seedWebhookOrg, send, withEmail, type WebhookOrg } from '../helpers/webhooks';

let h: Harness;
let flooding: WebhookOrg;
let quiet: WebhookOrg;

beforeAll(async () => {
  h = await startHarness({ env: { DISPATCH_ORGANISATION_RUNS: '10' } });
  flooding = await seedWebhookOrg(h, { platforms: ['reseller-d'] });
  quiet = await seedWebhookOrg(h, { platforms: ['cart-e'] });
});
afterAll(() => h?.close());

const FLOOD = 2_000;

/** One signed reseller-d batch of `count` paid orders of ebook-pro, one line each, their ids padded to `idLength`. */
function ordersBatch(prefix: string, count: number, idLength = 0): Buffer {
  const events = Array.from({ length: count }, (_, i) => {
    const id = `${prefix}-${i}-`.padEnd(idLength, 'x');
    return {
      id: `${prefix}-event-${i}`, type: 'order.completed', live: true,
      data: { id, currency: 'USD', customer: { first: 'Flood', last: 'Buyer', email: `${prefix}-${i}@example.com` }, items: [{ product: 'ebook-pro', quantity: 1, subtotal: 5 }] },
    };
  });
  return Buffer.from(JSON.stringify({ events }));
}

test('a tenant flooding 2,000 over-long orders does not hold back another tenant\'s receipt (it comes before a quarter of the flood is fulfilled)', async () => {
  const flood = await send(h.app, 'reseller-d', flooding.orgId, ordersBatch('flood', FLOOD, 200));
  expect(flood.status).toBe(200);
  expect(flood.body.deliveryIds).toHaveLength(FLOOD);

  const email = 'quiet-buyer@example.com';
  const sale = await send(h.app, 'cart-e', quiet.orgId, withEmail('cart-e', orderBody('cart-e', quiet.orgId, 'quiet-1'), email));
  expect(sale.status).toBe(200);
  // Long enough that an unfair claim fails on the count below, not on this wait.
  await h.mailbox.waitFor((m) => m.to.includes(email), 120_000);
  // Served oldest first, B's sale waits behind the whole flood (tried: 1,986 of A's 2,000 orders
  // were fulfilled first); fairly, behind a share of the engine's places: none of A's, when tried.
  const floodFulfilled = await h.orm.em.fork().count(WebhookDelivery, { organisation: flooding.orgId, status: 'Success' });
  expect(floodFulfilled).toBeLessThan(FLOOD / 4);

  // The flooding tenant's own orders are not stranded either: they are fulfilled, at its own pace.
  await eventually(async () => {
    const done = await h.orm.em.fork().count(WebhookDelivery, { organisation: flooding.orgId, status: 'Success' });
    return done >= 20 ? true : undefined;
  }, 120_000, 'the flooding tenant\'s first entries to be fulfilled');
  expect(await h.orm.em.fork().count(WebhookDelivery, { organisation: flooding.orgId, status: 'Error' })).toBe(0);
}, 300_000);

/** A sale of the organisation's course through the API, to `email`: resolves when its receipt arrived. */
async function sellOtherProduct(org: WebhookOrg, email: string): Promise<void> {
  const sale = await h.app.inject({
    method: 'POST', url: '/api/purchases', headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      customerId: 'new', 'newCustomer.name': 'Other Buyer', 'newCustomer.email': email,
      productId: org.course.productId, amount: '30', currency: 'usd', paymentMethod: 'custom', sendEmail: 'true',
    }).toString(),
  });
  expect(sale.statusCode).toBe(201);
  await h.mailbox.waitFor((m) => m.to.includes(email), 30_000);
}

test('sales waiting for license keys take none of the organisation\'s runs: more of them than DISPATCH_ORGANISATION_RUNS wait, and its other products still sell', async () => {
  const org = await seedWebhookOrg(h, { platforms: ['reseller-d'] });
  const headers = { authorization: `Bearer ${org.apiKey}` };
  const pool = await h.app.inject({ method: 'PUT', url: `/api/products/${org.ebook.productId}`, headers, payload: { licenseKeys: { source: 'pool', activationLimit: null } } });
  expect(pool.statusCode).toBe(200);

  // An empty pool: every sale is recorded and its run waits for a key (decisions §14), for days if need be.
  const parked = 12;
  expect((await send(h.app, 'reseller-d', org.orgId, ordersBatch('parked', parked))).status).toBe(200);
  const waiting = () => h.orm.em.fork().count(WebhookDeliveryItem, { delivery: { organisation: org.orgId }, outcome: null, reason: WAITING_FOR_KEY_REASON });
  await eventually(async () => ((await waiting()) === parked ? true : undefined), 60_000, `${parked} sales waiting for a key`);

  await sellOtherProduct(org, 'other-product@example.com');
}, 120_000);

test('sales whose receipts the relay defers take none of the organisation\'s runs while they are retried: its refunds and other sales go on', async () => {
  const org = await seedWebhookOrg(h, { platforms: ['reseller-d'] });
  // The relay defers these buyers' mail (451): each run retries its receipt for up to an hour.
  h.mailbox.setReject({ match: (address) => address.startsWith('deferred-'), code: 451 });
  try {
    const deferred = 12;
    expect((await send(h.app, 'reseller-d', org.orgId, ordersBatch('deferred', deferred))).status).toBe(200);
    const retrying = () => h.orm.em.fork().count(WebhookDeliveryItem, { delivery: { organisation: org.orgId }, outcome: null, reason: RECEIPT_RETRYING_REASON });
    await eventually(async () => ((await retrying()) === deferred ? true : undefined), 60_000, `${deferred} receipts being retried`);

    await sellOtherProduct(org, 'not-deferred@example.com');
  } finally {
    h.mailbox.setReject(undefined);
  }
}, 120_000);

test('a run that ends frees its place at once, whichever process ran it: with the budget full, the next sale starts without waiting for the dispatcher\'s poll, also after the word\'s session is lost', async () => {
  // One place, one loop, and a poll too slow to notice the place: only the worker's word can. The
  // worker is a process of its own (the roles apart), so the word has to cross processes.
  const one = await startHarness({ worker: false, env: { DISPATCH_ENGINE_RUNS: '1', DISPATCH_LOOPS: '1', DISPATCH_POLL_INTERVAL: '1m' } });
  const workers = workerProcesses(() => one);
  try {
    await workers.start();
    const org = await seedWebhookOrg(one, { platforms: ['cart-e'] });
    /** Sells `count` in a row; resolves when each has its receipt. */
    const sellInARow = async (label: string, count: number) => {
      const emails = Array.from({ length: count }, (_, n) => `one-place-${label}-${n}@example.com`);
      const sentAt = Date.now();
      for (const [n, email] of emails.entries()) {
        expect((await send(one.app, 'cart-e', org.orgId, withEmail('cart-e', orderBody('cart-e', org.orgId, `one-place-${label}-${n}`), email))).status).toBe(200);
      }
      for (const email of emails) await one.mailbox.waitFor((m) => m.to.includes(email), 45_000);
      // Runs one after another; with only the poll, the second would have waited a minute.
      expect(Date.now() - sentAt).toBeLessThan(30_000);
    };
    await sellInARow('first', 3);

    // The listener's session ends (PostgreSQL restarted, an operator's kill): it connects again, and hears the next words.
    const listeners = `select pid from pg_stat_activity where datname = current_database() and application_name = '${FREED_PLACES_APPLICATION}'`;
    const [killed] = await one.orm.em.fork().execute<Array<{ pid: number }>>(listeners);
    await one.orm.em.fork().execute(`select pg_terminate_backend(${Number(killed.pid)})`);
    await eventually(async () => {
      const now = await one.orm.em.fork().execute<Array<{ pid: number }>>(listeners);
      return now.length === 1 && now[0].pid !== killed.pid ? true : undefined;
    }, 10_000, 'the listener to connect again');
    await sellInARow('after-reconnect', 3);
  } finally {
    workers.close();
    await one.close();
  }
}, 180_000);

describe('the engine\'s places (no worker: a run started stays in the engine until the test finishes it)', () => {
  let engine: Harness;
  beforeAll(async () => {
    engine = await startHarness({
      worker: false,
      env: {
        DISPATCH_ENGINE_RUNS: '3', DISPATCH_ORGANISATION_RUNS: '3', DISPATCH_RESERVED_RUNS: '0', DISPATCH_LOOPS: '1', DISPATCH_POLL_INTERVAL: '1s', DISPATCH_FAIRNESS_WINDOW: '10m',
      },
    });
  }, 120_000);
  afterAll(() => engine?.close());
  // Each test starts with the budget free.
  afterEach(async () => {
    await engine.orm.em.fork().execute('delete from workflow_dispatch');
    await engine.orm.em.fork().execute(`update webhook_delivery_item set outcome = 'fulfilled' where outcome is null and run_started_at is not null`);
  });

  const waiting = async (org: WebhookOrg) => Number((await engine.orm.em.fork().execute<Array<{ n: string }>>(
    'select count(*) as n from workflow_dispatch where organisation_id = ? and dead_at is null', [org.orgId]))[0].n);
  const sell = async (org: WebhookOrg, orderId: string) => expect((await send(engine.app, 'cart-e', org.orgId, orderBody('cart-e', org.orgId, orderId))).status).toBe(200);
  /** `count` of the organisation's runs in the engine finish (as their outcome would be recorded). */
  const finish = (org: WebhookOrg, count: number) => engine.orm.em.fork().execute(
    `update webhook_delivery_item set outcome = 'fulfilled' where id in (select wi.id from webhook_delivery_item wi join webhook_delivery wd on wd.id = wi.delivery_id
      where wd.organisation_id = ? and wi.run_started_at is not null and wi.outcome is null limit ?)`, [org.orgId, count]);
  const waitUntil = (org: WebhookOrg, rows: number, what: string) => eventually(async () => ((await waiting(org)) === rows ? true : undefined), 30_000, what);
  /** Long enough for the loop to claim what it would (it polls every second). */
  const pollsPass = () => new Promise((resolve) => setTimeout(resolve, 2_500));

  test('they are one budget for all organisations; a place that frees goes to the organisation with none in the engine', async () => {
    // An empty outbox claims nothing, and without an error (each idle poll of every loop claims).
    expect(await engine.orm.em.fork().transactional((tx) => claimDueDispatches(tx, 10, { runsPerOrganisation: 3, engineRuns: 3, reservedRuns: 0, fairnessWindowMs: 30_000 }, CLAIM_LEASE_MS))).toEqual({ rows: [], heldOrganisations: [] });
    const [busy, calm] = [await seedWebhookOrg(engine, { platforms: ['cart-e'] }), await seedWebhookOrg(engine, { platforms: ['cart-e'] })];
    for (let i = 0; i < 5; i += 1) await sell(busy, `busy-${i}`);
    await waitUntil(busy, 2, 'three of the busy organisation\'s runs to start');

    await sell(calm, 'calm-1');
    await pollsPass();
    expect(await waiting(calm)).toBe(1); // the budget is taken: it waits, as the busy organisation's own rows do

    await finish(busy, 1);
    await waitUntil(calm, 0, 'the calm organisation\'s run to start');
    expect(await waiting(busy)).toBe(2);
  }, 120_000);

  test('a place that frees goes to the organisation that started the fewest runs while its oldest sale waited, though it has more in the engine', async () => {
    const [busy, calm] = [await seedWebhookOrg(engine, { platforms: ['cart-e'] }), await seedWebhookOrg(engine, { platforms: ['cart-e'] })];
    await sell(calm, 'calm-0');
    await sell(calm, 'calm-1');
    await waitUntil(calm, 0, 'the calm organisation\'s two runs to start');
    await sell(busy, 'busy-0');
    await waitUntil(busy, 0, 'the busy organisation\'s first run to start');
    for (let i = 1; i <= 3; i += 1) await sell(busy, `busy-${i}`);
    await pollsPass();
    expect(await waiting(busy)).toBe(3); // the budget is taken
    // Each run of the busy organisation that finishes hands its place to the next of its sales.
    await finish(busy, 1);
    await waitUntil(busy, 2, 'busy-1 to start');
    await finish(busy, 1);
    await waitUntil(busy, 1, 'busy-2 to start');

    // In the engine: busy 1, calm 2. Started while their oldest sale waited: busy 2 (busy-1, busy-2 since busy-3 came in), calm none.
    await sell(calm, 'calm-2');
    await pollsPass();
    expect(await waiting(calm)).toBe(1);
    await finish(busy, 1);
    await waitUntil(calm, 0, 'the calm organisation\'s sale to start');
    await pollsPass();
    expect(await waiting(busy)).toBe(1);
  }, 120_000);

  test('while another organisation has a sale due, one organisation leaves the reserved places to it; alone, it has the whole budget', async () => {
    const [busy, calm] = [await seedWebhookOrg(engine, { platforms: ['cart-e'] }), await seedWebhookOrg(engine, { platforms: ['cart-e'] })];
    for (let i = 0; i < 5; i += 1) await sell(busy, `reserve-busy-${i}`);
    await waitUntil(busy, 2, 'three of the busy organisation\'s runs to start'); // the harness's own budget: 3, none reserved
    // Claims with a budget of 5 of which 2 are reserved, each rolled back so that the next sees the same outbox.
    // Each answer names who took places, and who is held back until a place frees.
    const claimOwners = async () => {
      const claim = await claimRolledBack(engine.orm, 10, { runsPerOrganisation: 5, engineRuns: 5, reservedRuns: 2, fairnessWindowMs: 600_000 });
      return { took: claim.rows.map((r) => r.orgId), held: claim.heldOrganisations };
    };
    // Alone: its two waiting sales take the two free places, and then it holds the whole budget.
    expect(await claimOwners()).toEqual({ took: [busy.orgId, busy.orgId], held: [busy.orgId] });

    await sell(calm, 'reserve-calm-0');
    await pollsPass();
    expect(await waiting(calm)).toBe(1); // the harness's budget is taken
    // Busy holds 3 runs, the most it may while another has work (5 - 2): the calm organisation's sale takes a free place, busy's wait.
    expect(await claimOwners()).toEqual({ took: [calm.orgId], held: [busy.orgId] });
  }, 120_000);
});
