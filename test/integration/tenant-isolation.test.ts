/**
 * Security review H1 (issue 23): one organisation's flood must delay only itself. Organisation A
 * sends 2,000 orders whose ids are as long as the intake accepts (200 characters: a workflow id of
 * about 300 bytes, past the engine's `limit.maxIDLength` of 255 that the test server sets as
 * compose does); organisation B's sale, sent right after, gets its receipt within 5 s.
 * DISPATCH_ORGANISATION_RUNS is set for the test machine (two cores shared with other test runs):
 * what A has in the engine at once is what B's run finds ahead of it there.
 */
import { WebhookDelivery, WebhookDeliveryItem } from '../../src/db/entities';
import { WAITING_FOR_KEY_REASON } from '../../src/domain/license-keys';
import { claimDueDispatches } from '../../src/services/workflow-outbox';
import { startHarness, type Harness } from '../helpers/harness';
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

test('a tenant flooding 2,000 over-long orders does not hold back another tenant\'s receipt (under 5 s)', async () => {
  const flood = await send(h.app, 'reseller-d', flooding.orgId, ordersBatch('flood', FLOOD, 200));
  expect(flood.status).toBe(200);
  expect(flood.body.deliveryIds).toHaveLength(FLOOD);

  const email = 'quiet-buyer@example.com';
  const sentAt = Date.now();
  const sale = await send(h.app, 'cart-e', quiet.orgId, withEmail('cart-e', orderBody('cart-e', quiet.orgId, 'quiet-1'), email));
  expect(sale.status).toBe(200);
  await h.mailbox.waitFor((m) => m.to.includes(email), 30_000);
  expect(Date.now() - sentAt).toBeLessThan(5_000);

  // The flooding tenant's own orders are not stranded either: they are fulfilled, at its own pace.
  await eventually(async () => {
    const done = await h.orm.em.fork().count(WebhookDelivery, { organisation: flooding.orgId, status: 'Success' });
    return done >= 20 ? true : undefined;
  }, 120_000, 'the flooding tenant\'s first entries to be fulfilled');
  expect(await h.orm.em.fork().count(WebhookDelivery, { organisation: flooding.orgId, status: 'Error' })).toBe(0);
}, 180_000);

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

  const sale = await h.app.inject({
    method: 'POST', url: '/api/purchases', headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      customerId: 'new', 'newCustomer.name': 'Other Buyer', 'newCustomer.email': 'other-product@example.com',
      productId: org.course.productId, amount: '30', currency: 'usd', paymentMethod: 'custom', sendEmail: 'true',
    }).toString(),
  });
  expect(sale.statusCode).toBe(201);
  await h.mailbox.waitFor((m) => m.to.includes('other-product@example.com'), 30_000);
}, 120_000);

test('the engine\'s places are one budget for all organisations, and a place that frees goes to the organisation with the fewest runs there', async () => {
  // No worker: the runs started stay in the engine until the test says one finished. One dispatcher
  // loop: another loop's claim in flight is not yet counted, so two may pass the budget by a batch.
  const engine = await startHarness({
    worker: false, env: { DISPATCH_ENGINE_RUNS: '3', DISPATCH_ORGANISATION_RUNS: '3', DISPATCH_LOOPS: '1', DISPATCH_POLL_INTERVAL: '1s' },
  });
  try {
    // An empty outbox claims nothing, and without an error (each idle poll of every loop claims).
    expect(await engine.orm.em.fork().transactional((tx) => claimDueDispatches(tx, 10, { runsPerOrganisation: 3, engineRuns: 3 }))).toEqual([]);
    const [busy, calm] = [await seedWebhookOrg(engine, { platforms: ['cart-e'] }), await seedWebhookOrg(engine, { platforms: ['cart-e'] })];
    const waiting = async (org: WebhookOrg) => Number((await engine.orm.em.fork().execute<Array<{ n: string }>>(
      'select count(*) as n from workflow_dispatch where organisation_id = ? and dead_at is null', [org.orgId]))[0].n);
    for (let i = 0; i < 5; i += 1) {
      expect((await send(engine.app, 'cart-e', busy.orgId, orderBody('cart-e', busy.orgId, `busy-${i}`))).status).toBe(200);
    }
    await eventually(async () => ((await waiting(busy)) === 2 ? true : undefined), 30_000, 'three of the busy organisation\'s runs to start');

    expect((await send(engine.app, 'cart-e', calm.orgId, orderBody('cart-e', calm.orgId, 'calm-1'))).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(await waiting(calm)).toBe(1); // the budget is taken: it waits, as the busy organisation's own rows do

    // One of the busy organisation's runs finishes: the place goes to the organisation with none in the engine.
    await engine.orm.em.fork().execute(
      `update webhook_delivery_item set outcome = 'fulfilled' where id = (select wi.id from webhook_delivery_item wi join webhook_delivery wd on wd.id = wi.delivery_id
        where wd.organisation_id = ? and wi.run_started_at is not null and wi.outcome is null limit 1)`, [busy.orgId]);
    await eventually(async () => ((await waiting(calm)) === 0 ? true : undefined), 30_000, 'the calm organisation\'s run to start');
    expect(await waiting(busy)).toBe(2);
  } finally {
    await engine.close();
  }
}, 120_000);
