/**
 * Outbound events under a crash: a worker process (from the build, as `npm run start:worker` runs
 * it) is SIGKILLed in the middle of a burst of 200 purchases with two endpoints, and started again.
 * Every endpoint gets every event at least once; de-duplicated by webhook-id, exactly once.
 */
import { Webhook } from 'standardwebhooks';
import { seedOrganisation, seedProduct, type SeededProduct } from '../helpers/seed';
import { startHarness, type Harness } from '../helpers/harness';
import { workerProcesses } from '../helpers/worker-process';
import { startReceiver, type Receiver } from '../helpers/receivers';
import { eventually } from '../helpers/webhooks';

const PURCHASES = 200;
const OUTBOUND_ENV = { OUTBOUND_WEBHOOKS_ALLOW_PRIVATE: 'true', OUTBOUND_RETRY_SCHEDULE: '1s,2s,5s,10s,30s,1m' };

let h: Harness;
const receivers: Receiver[] = [];
const workers = workerProcesses(() => h, OUTBOUND_ENV);

beforeAll(async () => {
  h = await startHarness({ worker: false, env: OUTBOUND_ENV });
}, 300_000);
afterAll(async () => {
  workers.close();
  for (const r of receivers) await r.close();
  await h?.close();
});

async function sell(apiKey: string, product: SeededProduct, n: number): Promise<void> {
  const res = await h.app.inject({
    method: 'POST', url: '/api/purchases', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      customerId: 'new', 'newCustomer.name': 'Burst', 'newCustomer.email': `burst-${n}@example.com`,
      productId: product.productId, amount: '5.00', currency: 'EUR', sendEmail: 'false',
    }).toString(),
  });
  expect(res.statusCode).toBe(201);
}

test('a worker SIGKILLed during a burst of 200 purchases: each endpoint gets every event, exactly once after de-duplication', async () => {
  const org = await seedOrganisation(h);
  const product = await seedProduct(h, org.orgId);
  const secrets: string[] = [];
  for (let i = 0; i < 2; i += 1) {
    const receiver = await startReceiver();
    receivers.push(receiver);
    const res = await h.app.inject({
      method: 'POST', url: '/api/webhook-endpoints', headers: { authorization: `Bearer ${org.apiKey}` }, payload: { url: receiver.url },
    });
    expect(res.statusCode).toBe(201);
    secrets.push((res.json() as { secret: string }).secret);
  }

  const first = await workers.start();
  for (let n = 0; n < PURCHASES; n += 20) {
    await Promise.all(Array.from({ length: 20 }, (_, i) => sell(org.apiKey, product, n + i)));
    // Killed once deliveries are under way, while most of the burst is still to come.
    if (n === 60) {
      await eventually(async () => (receivers[0].received.length > 0 ? true : undefined), 60_000, 'the first deliveries');
      first.child.kill('SIGKILL');
      await workers.start();
    }
  }

  // An event is listed once every transaction that began before it has ended (a worker's may still run).
  const listEvents = async () => (await h.app.inject({ method: 'GET', url: '/api/events?limit=1000', headers: { authorization: `Bearer ${org.apiKey}` } }))
    .json() as Array<{ id: string; type: string }>;
  const events = await eventually(async () => {
    const listed = await listEvents();
    return listed.length >= PURCHASES ? listed : undefined;
  }, 30_000, 'every event to be listed');
  expect(events).toHaveLength(PURCHASES);
  expect(new Set(events.map((e) => e.type))).toEqual(new Set(['purchase.created']));
  const ids = new Set(events.map((e) => e.id));
  for (const [i, receiver] of receivers.entries()) {
    await eventually(async () => (receiver.uniqueIds().size >= PURCHASES ? true : undefined), 240_000, `endpoint ${i} to have every event`);
    expect(receiver.uniqueIds()).toEqual(ids);
    const wh = new Webhook(secrets[i]);
    for (const req of receiver.received) expect(() => wh.verify(req.body, req.headers as Record<string, string>)).not.toThrow();
  }
}, 600_000);
