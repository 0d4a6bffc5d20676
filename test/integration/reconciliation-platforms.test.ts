/**
 * Missed-webhook reconciliation (decisions §15) end to end for the platforms beyond storefront-a
 * (test/integration/reconciliation.test.ts), each against a local simulator of its order-list API
 * (test/helpers/simulators): 120 orders, 30 of them never sent as webhooks, one run recovers exactly
 * those; a 429 with Retry-After is waited out; a 401 pauses the schedule with one email. Real
 * PostgreSQL, Temporal, SMTP sink.
 */
import { Purchase, SentEmail, WebhookDelivery } from '../../src/db/entities';
import { reconcileScheduleId } from '../../src/domain/reconciliation';
import type { Platform } from '../../src/domain/platforms';
import type { ReconciliationJson } from '../../src/services/reconciliation';
import { startHarness, type Harness } from '../helpers/harness';
import type { OrderListServer } from '../helpers/simulators/order-list-server';
import { startCartESimulator } from '../helpers/simulators/cart-e';
import { startPaymentsCSimulator } from '../helpers/simulators/payments-c';
import { eventually, seedWebhookOrg, send, type WebhookOrg } from '../helpers/webhooks';

/** An order of a simulator: its id, buyer and when the platform last changed it. */
interface Order {
  id: string;
  email: string;
  at: Date;
}

/** What the tests need of one platform's simulator. */
interface Simulated extends OrderListServer {
  /** The settings' PUT body (without `enabled`) pointing at the simulator. */
  credentials: Record<string, string>;
  /** The order's webhook body, as the platform would have sent it. */
  webhookBody(order: Order): Buffer;
}

interface PlatformCase {
  platform: Platform;
  /** The simulator of `orgId`'s account holding `orders`. */
  start(orders: Order[], orgId: string): Promise<Simulated>;
  /** Successful page reads of one run over all 120 orders. */
  pages: number;
  /** The page the 429 lands on (0-based). */
  throttledPage: number;
  /** How many of the orders a run reads when its since is `since`. */
  readSince(orders: Order[], since: Date): number;
  /** A distinct order id. */
  orderId(n: number): string;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

const CASES: PlatformCase[] = [
  {
    platform: 'cart-e',
    async start(orders) {
      const sim = await startCartESimulator(orders.map((o) => ({ id: o.id, email: o.email, createdAt: o.at })));
      return {
        ...sim,
        credentials: { apiBaseUrl: sim.origin, accessToken: sim.accessToken },
        webhookBody: (order) => sim.pingBody({ id: order.id, email: order.email, createdAt: order.at }),
      };
    },
    pages: 12,
    throttledPage: 1,
    // `after` is a day: the whole UTC day of the since.
    readSince: (orders, since) => orders.filter((o) => o.at.getTime() >= Date.parse(`${since.toISOString().slice(0, 10)}T00:00:00Z`)).length,
    orderId: (n) => `CartE${n}x9pQ2rT5vW8yZ1bC4==`,
  },
  {
    platform: 'payments-c',
    // The webhook's shared route knows the organisation by the metadata the seller set; the list is the integration's own.
    async start(orders, orgId) {
      const sim = await startPaymentsCSimulator(orders.map((o) => ({ id: o.id, email: o.email, created: o.at })), { metadata: { org_id: orgId } });
      return {
        ...sim,
        credentials: { apiBaseUrl: sim.origin, secretKey: sim.secretKey },
        webhookBody: (order) => sim.eventBody({ id: order.id, email: order.email, created: order.at }),
      };
    },
    pages: 3,
    throttledPage: 1,
    // `created[gte]` in whole seconds, of `created` in whole seconds.
    readSince: (orders, since) => orders.filter((o) => Math.floor(o.at.getTime() / 1000) >= Math.floor(since.getTime() / 1000)).length,
    orderId: (n) => `cs_live_sim${n}ExampleCheckoutSession`,
  },
];

let h: Harness;
const simulators: Simulated[] = [];

beforeAll(async () => {
  h = await startHarness({ env: { OUTBOUND_WEBHOOKS_ALLOW_PRIVATE: 'true', RECONCILE_INTERVAL: '1h' } });
});
afterAll(async () => {
  await Promise.all(simulators.map((s) => s.close()));
  await h?.close();
});

let nextOrder = 100_000;

describe.each(CASES)('$platform', (c) => {
  /** `count` orders changed over the last hours, oldest first. */
  function ordersOf(count: number): Order[] {
    const now = Date.now();
    return Array.from({ length: count }, (_, i) => {
      nextOrder += 1;
      return { id: c.orderId(nextOrder), email: `buyer-${nextOrder}@example.com`, at: new Date(now - (count - i) * MINUTE) };
    });
  }

  async function simulator(orders: Order[], orgId: string): Promise<Simulated> {
    const sim = await c.start(orders, orgId);
    simulators.push(sim);
    return sim;
  }

  const api = (org: WebhookOrg, method: 'GET' | 'PUT' | 'POST', path: string, payload?: object) => h.app.inject({
    method, url: `/api/settings/integrations/${c.platform}/reconciliation${path}`, headers: { authorization: `Bearer ${org.apiKey}` }, ...(payload ? { payload } : {}),
  });

  async function settingsOf(org: WebhookOrg): Promise<ReconciliationJson> {
    const res = await api(org, 'GET', '');
    expect(res.statusCode).toBe(200);
    return res.json();
  }

  async function enable(org: WebhookOrg, sim: Simulated): Promise<ReconciliationJson> {
    const res = await api(org, 'PUT', '', { enabled: true, ...sim.credentials });
    expect(res.statusCode).toBe(200);
    return res.json();
  }

  async function runOnce(org: WebhookOrg): Promise<ReconciliationJson> {
    const before = (await settingsOf(org)).lastRunAt;
    expect((await api(org, 'POST', '/run')).statusCode).toBe(202);
    return eventually(async () => {
      const now = await settingsOf(org);
      return now.lastRunAt !== before ? now : undefined;
    }, 90_000, 'the reconciliation run to finish');
  }

  const receiptsOf = (orgId: string) => h.orm.em.fork().count(SentEmail, { organisation: orgId, kind: 'receipt', status: 'sent' });
  const receiptsReach = (orgId: string, count: number) => eventually(async () => ((await receiptsOf(orgId)) >= count ? true : undefined), 90_000, `${count} receipts`);

  test('one run recovers exactly the orders whose webhooks never came; a second run changes nothing', async () => {
    const org = await seedWebhookOrg(h, { platforms: [c.platform] });
    const orders = ordersOf(120);
    const missed = new Set(orders.filter((_, i) => i % 4 === 1).map((o) => o.id));
    expect(missed.size).toBe(30);
    const sim = await simulator(orders, org.orgId);
    for (const order of orders.filter((o) => !missed.has(o.id))) {
      expect((await send(h.app, c.platform, org.orgId, sim.webhookBody(order))).status).toBe(200);
    }
    await receiptsReach(org.orgId, 90);

    const enabled = await enable(org, sim);
    expect(enabled).toMatchObject({ enabled: true, state: 'active', apiBaseUrl: sim.origin });
    for (const secret of Object.values(sim.credentials).filter((v) => v !== sim.origin)) expect(JSON.stringify(enabled)).not.toContain(secret);

    const first = await runOnce(org);
    expect(first.lastResult).toEqual({ pulled: 120, recovered: 30, alreadyKnown: 90, errors: 0 });
    await receiptsReach(org.orgId, 120);
    const em = h.orm.em.fork();
    const purchases = await em.find(Purchase, { organisation: org.orgId, source: c.platform });
    expect(purchases).toHaveLength(120);
    expect(new Set(purchases.map((p) => p.externalOrderId)).size).toBe(120);
    const recovered = await em.find(WebhookDelivery, { organisation: org.orgId, source: 'reconciliation' });
    expect(new Set(recovered.map((d) => d.externalOrderId))).toEqual(missed);
    expect(sim.requests.filter((r) => r.status === 200)).toHaveLength(c.pages);

    // The next run reads from the newest change it saw less an hour.
    const second = await runOnce(org);
    const newest = Math.floor(orders[orders.length - 1].at.getTime() / 1000) * 1000;
    const again = c.readSince(orders, new Date(newest - HOUR));
    expect(second.lastResult).toEqual({ pulled: again, recovered: 0, alreadyKnown: again, errors: 0 });
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await receiptsOf(org.orgId)).toBe(120);
    expect(await h.orm.em.fork().count(WebhookDelivery, { organisation: org.orgId })).toBe(120);
  });

  test('a 429 with Retry-After: 2 makes the run wait that long and complete', async () => {
    const org = await seedWebhookOrg(h, { platforms: [c.platform] });
    const sim = await simulator(ordersOf(120), org.orgId);
    await enable(org, sim);
    sim.throttleOnce(c.throttledPage, 2);
    const done = await runOnce(org);
    expect(done.lastResult).toEqual({ pulled: 120, recovered: 120, alreadyKnown: 0, errors: 0 });
    const throttled = sim.requests.find((r) => r.status === 429)!;
    const retried = sim.requests.find((r) => r.page === c.throttledPage && r.status === 200)!;
    expect(retried.at - throttled.at).toBeGreaterThanOrEqual(2_000);
    await receiptsReach(org.orgId, 120);
  });

  test('refused credentials (401) pause the schedule and email owners and admins once', async () => {
    const org = await seedWebhookOrg(h, { platforms: [c.platform] });
    const sim = await simulator(ordersOf(3), org.orgId);
    await enable(org, sim);
    sim.revokeToken();
    const paused = await runOnce(org);
    expect(paused).toMatchObject({ state: 'paused', nextRunAt: null, lastResult: { pulled: 0, recovered: 0, alreadyKnown: 0, errors: 1 } });
    expect(paused.pausedReason).toMatch(/401/);
    expect((await h.temporal.schedule.getHandle(reconcileScheduleId(org.orgId, c.platform)).describe()).state.paused).toBe(true);
    const subject = `Reconciliation paused for ${c.platform}`;
    const mails = await eventually(async () => {
      const found = h.mailbox.messages().filter((m) => m.subject.startsWith(subject));
      return found.length > 0 ? found : undefined;
    });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(h.mailbox.messages().filter((m) => m.subject.startsWith(subject))).toHaveLength(1);
    expect(mails[0].to).toEqual([expect.stringMatching(/^owner-/)]);
  });
});
