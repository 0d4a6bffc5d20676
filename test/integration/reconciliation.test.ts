/**
 * Missed-webhook reconciliation (decisions §15) end to end for storefront-a: the settings API, the
 * Temporal Schedule, the `reconcileIntegration` run against a local simulator of the platform's order
 * list (test/helpers/simulators/storefront-a.ts), the webhook intake it shares, real fulfilment and
 * receipts. Real PostgreSQL, Temporal, SMTP sink.
 */
import { Client, Connection } from '@temporalio/client';
import { Purchase, SentEmail, WebhookDelivery } from '../../src/db/entities';
import { PLATFORMS } from '../../src/domain/platforms';
import { pauseReconciliation, reconciliationOf } from '../../src/accounts/reconciliation-store';
import { nextIntervalTime, reconcileScheduleId } from '../../src/domain/reconciliation';
import { configureReconciliation, openCredentials, reconciliationSettings, type ReconciliationJson } from '../../src/services/reconciliation';
import { ReconcileSchedules } from '../../src/temporal/reconcile-schedules';
import { NO_ORDER_API, orderListClientOf } from '../../src/webhooks/order-lists';
import { startHarness, type Harness } from '../helpers/harness';
import { startStorefrontASimulator, type SimulatedOrder, type StorefrontASimulator } from '../helpers/simulators/storefront-a';
import { signIn } from '../helpers/dashboard';
import { seedUser } from '../helpers/seed';
import { eventually, seedWebhookOrg, send, type WebhookOrg } from '../helpers/webhooks';

let h: Harness;
const simulators: StorefrontASimulator[] = [];

beforeAll(async () => {
  h = await startHarness({ env: { OUTBOUND_WEBHOOKS_ALLOW_PRIVATE: 'true', RECONCILE_INTERVAL: '1h' } });
});
afterAll(async () => {
  await Promise.all(simulators.map((s) => s.close()));
  await h?.close();
});

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
let nextId = 5_901_000_100_000;

/** `count` paid orders changed over the last hours, oldest first. */
function ordersOf(count: number): SimulatedOrder[] {
  const now = Date.now();
  return Array.from({ length: count }, (_, i) => {
    nextId += 1;
    return { id: String(nextId), email: `buyer-${nextId}@example.com`, updatedAt: new Date(now - (count - i) * MINUTE) };
  });
}

async function simulator(orders: SimulatedOrder[]): Promise<StorefrontASimulator> {
  const sim = await startStorefrontASimulator(orders);
  simulators.push(sim);
  return sim;
}

const api = (org: WebhookOrg, method: 'GET' | 'PUT' | 'POST', path: string, payload?: object) => h.app.inject({
  method, url: `/api/settings/integrations/storefront-a/reconciliation${path}`, headers: { authorization: `Bearer ${org.apiKey}` }, ...(payload ? { payload } : {}),
});

async function settingsOf(org: WebhookOrg): Promise<ReconciliationJson> {
  const res = await api(org, 'GET', '');
  expect(res.statusCode).toBe(200);
  return res.json();
}

async function enable(org: WebhookOrg, sim: StorefrontASimulator): Promise<ReconciliationJson> {
  const res = await api(org, 'PUT', '', { enabled: true, apiBaseUrl: sim.origin, shopDomain: 'example-store.myshopify.com', accessToken: sim.accessToken });
  expect(res.statusCode).toBe(200);
  return res.json();
}

/** Starts a run now and waits for it to record its result. */
async function runOnce(org: WebhookOrg, timeoutMs = 60_000): Promise<ReconciliationJson> {
  const before = (await settingsOf(org)).lastRunAt;
  const res = await api(org, 'POST', '/run');
  expect(res.statusCode).toBe(202);
  return eventually(async () => {
    const now = await settingsOf(org);
    return now.lastRunAt !== before ? now : undefined;
  }, timeoutMs, 'the reconciliation run to finish');
}

async function receiptsOf(orgId: string): Promise<number> {
  return h.orm.em.fork().count(SentEmail, { organisation: orgId, kind: 'receipt', status: 'sent' });
}

async function receiptsReach(orgId: string, count: number): Promise<void> {
  await eventually(async () => ((await receiptsOf(orgId)) >= count ? true : undefined), 90_000, `${count} receipts`);
}

async function sendWebhooks(sim: StorefrontASimulator, org: WebhookOrg, orders: SimulatedOrder[]): Promise<void> {
  for (const order of orders) {
    const res = await send(h.app, 'storefront-a', org.orgId, Buffer.from(sim.orderJson(order)));
    expect(res.status).toBe(200);
  }
}

test('the settings are read without the engine: the next run comes from the schedule\'s interval', async () => {
  const org = await seedWebhookOrg(h, { platforms: ['storefront-a'] });
  await enable(org, await simulator([]));
  // A settings read once failed with a 500 when the engine took 30 s to describe a busy schedule.
  const unreachable = new Client({ connection: Connection.lazy({ address: '127.0.0.1:1' }) });
  const schedules = new ReconcileSchedules(unreachable, { taskQueue: 'unused', intervalMs: HOUR });
  const now = new Date();
  const settings = await reconciliationSettings(h.orm.em.fork(), { schedules, now }, org.orgId, 'storefront-a');
  expect(settings).toMatchObject({ enabled: true, state: 'active', nextRunAt: nextIntervalTime(HOUR, now).toISOString() });
});

test('a shop domain that names a non-public address is refused when saved, as an API address would be', async () => {
  const org = await seedWebhookOrg(h, { platforms: ['storefront-a'] });
  // The service's own rules, without this file's OUTBOUND_WEBHOOKS_ALLOW_PRIVATE (refused before the engine is asked).
  const unreachable = new Client({ connection: Connection.lazy({ address: '127.0.0.1:1' }) });
  const deps = { keyRing: h.keyRing, schedules: new ReconcileSchedules(unreachable, { taskQueue: 'unused', intervalMs: HOUR }), allowPrivate: false, now: new Date() };
  for (const shopDomain of ['127.0.0.1', '169.254.169.254']) {
    await expect(configureReconciliation(h.orm.em.fork(), deps, org.orgId, 'storefront-a', { enabled: true, shopDomain, accessToken: 'shpat_x' }))
      .rejects.toThrow(new RegExp(`^shopDomain: ${shopDomain.replace(/\./g, '\\.')} .*only public addresses are allowed`));
  }
  expect(await reconciliationOf(h.orm.em.fork(), org.orgId, 'storefront-a')).toBeUndefined();
});

test('one run recovers exactly the orders whose webhooks never came; a second run changes nothing', async () => {
  const org = await seedWebhookOrg(h, { platforms: ['storefront-a'] });
  const orders = ordersOf(120);
  const missed = new Set(orders.filter((_, i) => i % 4 === 1).map((o) => o.id));
  expect(missed.size).toBe(30);
  const sim = await simulator(orders);
  await sendWebhooks(sim, org, orders.filter((o) => !missed.has(o.id)));
  await receiptsReach(org.orgId, 90);

  expect(await settingsOf(org)).toMatchObject({ enabled: false, state: 'off', lastRunAt: null, lastResult: null, nextRunAt: null });
  const enabled = await enable(org, sim);
  expect(enabled).toMatchObject({ enabled: true, state: 'active', pausedReason: null, apiBaseUrl: sim.origin });
  expect(JSON.stringify(enabled)).not.toContain(sim.accessToken);
  // The schedule is the engine's own: every hour here (RECONCILE_INTERVAL), overlapping runs skipped.
  const schedule = await h.temporal.schedule.getHandle(reconcileScheduleId(org.orgId, 'storefront-a')).describe();
  expect(schedule.state.paused).toBe(false);
  expect(schedule.policies.overlap).toBe('SKIP');
  expect(schedule.spec.intervals?.[0]?.every).toBe(3_600_000);
  // The settings compute the next run from the interval; it is the time the engine has for it.
  expect(enabled.nextRunAt).toBe(schedule.info.nextActionTimes[0]?.toISOString());
  expect(Date.parse(enabled.nextRunAt!)).toBeGreaterThan(Date.now());

  const first = await runOnce(org);
  expect(first.lastResult).toEqual({ pulled: 120, recovered: 30, alreadyKnown: 90, errors: 0 });
  await receiptsReach(org.orgId, 120);
  const em = h.orm.em.fork();
  const purchases = await em.find(Purchase, { organisation: org.orgId, source: 'storefront-a' });
  expect(purchases).toHaveLength(120);
  expect(new Set(purchases.map((p) => p.externalOrderId)).size).toBe(120);
  const recovered = await em.find(WebhookDelivery, { organisation: org.orgId, source: 'reconciliation' });
  expect(new Set(recovered.map((d) => d.externalOrderId))).toEqual(missed);
  // The log says so: every entry has its source, and the filter shows the recovered ones.
  const log = await h.app.inject({ method: 'GET', url: '/api/webhook-deliveries?source=reconciliation&limit=1000', headers: { authorization: `Bearer ${org.apiKey}` } });
  expect(log.statusCode).toBe(200);
  expect(new Set((log.json() as Array<{ externalOrderId: string; source: string }>).map((e) => e.externalOrderId))).toEqual(missed);
  const all = await h.app.inject({ method: 'GET', url: '/api/webhook-deliveries?limit=1000', headers: { authorization: `Bearer ${org.apiKey}` } });
  expect((all.json() as Array<{ source: string }>).filter((e) => e.source === 'webhook')).toHaveLength(90);

  // Pages of 50: the first read from the lookback, the others by page_info.
  expect(sim.requests.filter((r) => r.status === 200)).toHaveLength(3);
  // The next run reads from the newest change it saw less an hour: the last 61 of the minute-spaced orders.
  const second = await runOnce(org);
  expect(second.lastResult).toEqual({ pulled: 61, recovered: 0, alreadyKnown: 61, errors: 0 });
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  expect(await receiptsOf(org.orgId)).toBe(120);
  expect(await h.orm.em.fork().count(WebhookDelivery, { organisation: org.orgId })).toBe(120);

  // Disabled: the schedule is gone.
  const off = await api(org, 'PUT', '', { enabled: false });
  expect(off.statusCode).toBe(200);
  expect(off.json()).toMatchObject({ enabled: false, state: 'off', nextRunAt: null });
  await expect(h.temporal.schedule.getHandle(reconcileScheduleId(org.orgId, 'storefront-a')).describe()).rejects.toThrow(/not found/i);
});

test('an order whose webhook came before it was paid, and whose paid webhook never came, is recovered once', async () => {
  const org = await seedWebhookOrg(h, { platforms: ['storefront-a'] });
  const [order] = ordersOf(1);
  const sim = await simulator([order]);
  // Its first webhook said pending: the entry holds its line as not paid, and no purchase is made.
  await sendWebhooks(sim, org, [{ ...order, financialStatus: 'pending' }]);
  expect(await h.orm.em.fork().count(WebhookDelivery, { organisation: org.orgId, externalOrderId: order.id })).toBe(1);
  await enable(org, sim);
  expect((await runOnce(org)).lastResult).toEqual({ pulled: 1, recovered: 1, alreadyKnown: 0, errors: 0 });
  await receiptsReach(org.orgId, 1);
  expect(await h.orm.em.fork().count(Purchase, { organisation: org.orgId, externalOrderId: order.id })).toBe(1);
  expect((await runOnce(org)).lastResult).toEqual({ pulled: 1, recovered: 0, alreadyKnown: 1, errors: 0 });
});

/** The Reconciliation part of the storefront-a panel on the Integrations page, as an admin sees it. */
async function reconciliationPartOf(org: WebhookOrg): Promise<string> {
  const admin = await seedUser(h, org.orgId, 'admin');
  const { cookie } = await signIn(h.app, admin.email);
  const page = await h.app.inject({ method: 'GET', url: '/settings/integrations', headers: { cookie } });
  expect(page.statusCode).toBe(200);
  expect(page.body).not.toContain('data-testid="reseller-d-classic-reconciliation"');
  return /<details[^>]*data-testid="storefront-a-reconciliation"[\s\S]*?<\/details>/.exec(page.body)![0];
}

test('the Integrations page shows reconciliation off, then on with its last run, the next one and empty credential fields', async () => {
  const org = await seedWebhookOrg(h, { platforms: ['storefront-a'] });
  const off = await reconciliationPartOf(org);
  expect(off).toContain('badge-pending">off');
  expect(off).toContain('none yet');
  expect(off).not.toContain('Run now');
  const sim = await simulator(ordersOf(2));
  await enable(org, sim);
  await runOnce(org);
  const on = await reconciliationPartOf(org);
  expect(on).toContain('badge-success">on');
  expect(on).toMatch(/: 2 read, 2 recovered, 0 already known, 0 errors/);
  expect(on).toMatch(/Next run<\/dt><dd><time datetime="/);
  expect(on).toContain('Run now');
  expect(on).toMatch(/<input id="storefront-a-reconcile-accessToken" name="accessToken" type="password" autocomplete="off" maxlength="500">/);
  expect(on).not.toContain(sim.accessToken);
  // The saved address is shown, not sent back: an empty field keeps it, or follows a new shop domain.
  expect(on).toContain(`<input id="storefront-a-reconcile-origin" name="apiBaseUrl" type="url" autocomplete="off" maxlength="2048" placeholder="${sim.origin}">`);
});

test('credentials saved in part keep the others; the platform\'s own address follows a new shop domain', async () => {
  const org = await seedWebhookOrg(h, { platforms: ['storefront-a'] });
  const put = (payload: object) => api(org, 'PUT', '', payload);
  const first = await put({ enabled: false, shopDomain: 'first-shop.myshopify.com', accessToken: 'shpat_first' });
  expect([first.statusCode, first.json().apiBaseUrl]).toEqual([200, 'https://first-shop.myshopify.com']);
  const moved = await put({ enabled: false, shopDomain: 'second-shop.myshopify.com' });
  expect([moved.statusCode, moved.json().apiBaseUrl]).toEqual([200, 'https://second-shop.myshopify.com']);
  const row = await reconciliationOf(h.orm.em.fork(), org.orgId, 'storefront-a');
  expect(openCredentials(h.keyRing, row!)).toEqual({ shopDomain: 'second-shop.myshopify.com', accessToken: 'shpat_first' });
});

test('a 429 with Retry-After: 2 makes the run wait that long and complete', async () => {
  const org = await seedWebhookOrg(h, { platforms: ['storefront-a'] });
  const sim = await simulator(ordersOf(120));
  await enable(org, sim);
  sim.throttleOnce(1, 2);
  const done = await runOnce(org);
  expect(done.lastResult).toEqual({ pulled: 120, recovered: 120, alreadyKnown: 0, errors: 0 });
  const throttled = sim.requests.find((r) => r.status === 429)!;
  const retried = sim.requests.find((r) => r.page === 1 && r.status === 200)!;
  expect(retried.at - throttled.at).toBeGreaterThanOrEqual(2_000);
  await receiptsReach(org.orgId, 120);
});

test('refused credentials (401) pause the schedule and email owners and admins once; saving them again resumes it', async () => {
  const org = await seedWebhookOrg(h, { platforms: ['storefront-a'] });
  const sim = await simulator(ordersOf(3));
  await enable(org, sim);
  sim.revokeToken();
  const paused = await runOnce(org);
  expect(paused).toMatchObject({ state: 'paused', nextRunAt: null, lastResult: { pulled: 0, recovered: 0, alreadyKnown: 0, errors: 1 } });
  expect(paused.pausedReason).toMatch(/401/);
  const handle = h.temporal.schedule.getHandle(reconcileScheduleId(org.orgId, 'storefront-a'));
  expect((await handle.describe()).state.paused).toBe(true);
  // A run the schedule had already started meets the pause and does nothing; run-now says why.
  await h.temporal.workflow.execute('reconcileIntegration', {
    taskQueue: h.config.temporal.taskQueue, workflowId: `reconcile-extra-${org.orgId}`, args: [{ orgId: org.orgId, platform: 'storefront-a' }],
  });
  expect((await api(org, 'POST', '/run')).statusCode).toBe(409);
  const mails = await eventually(async () => {
    const found = h.mailbox.messages().filter((m) => m.subject.startsWith('Reconciliation paused for storefront-a'));
    return found.length > 0 ? found : undefined;
  });
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  expect(h.mailbox.messages().filter((m) => m.subject.startsWith('Reconciliation paused for storefront-a'))).toHaveLength(1);
  expect(mails[0].to).toEqual([expect.stringMatching(/^owner-/)]);

  // The Integrations page says so, with what to do, and offers no run while paused.
  const pausedPart = await reconciliationPartOf(org);
  expect(pausedPart).toMatch(/<details[^>]* open>/);
  expect(pausedPart).toContain('badge-error">paused');
  expect(pausedPart).toMatch(/401[^<]*: save the credentials again to resume/);
  expect(pausedPart).not.toContain('Run now');

  const resumed = await api(org, 'PUT', '', { enabled: true, apiBaseUrl: sim.origin, shopDomain: 'example-store.myshopify.com', accessToken: 'shpat_a_new_token' });
  expect(resumed.json()).toMatchObject({ state: 'active', pausedReason: null });
  expect((await handle.describe()).state.paused).toBe(false);
});

test('a refusal of credentials saved before the current ones (a late or retried run) pauses nothing', async () => {
  const org = await seedWebhookOrg(h, { platforms: ['storefront-a'] });
  const sim = await simulator(ordersOf(1));
  await enable(org, sim);
  const refused = (await reconciliationOf(h.orm.em.fork(), org.orgId, 'storefront-a'))!.updated_at;
  await new Promise((resolve) => setTimeout(resolve, 5));
  await enable(org, sim);
  const late = await pauseReconciliation(h.orm.em.fork(), { orgId: org.orgId, platform: 'storefront-a', reason: 'old key (401)', now: new Date(), savedAt: refused });
  expect(late).toBeUndefined();
  expect(await settingsOf(org)).toMatchObject({ state: 'active', pausedReason: null });
  const current = (await reconciliationOf(h.orm.em.fork(), org.orgId, 'storefront-a'))!.updated_at;
  expect(await pauseReconciliation(h.orm.em.fork(), { orgId: org.orgId, platform: 'storefront-a', reason: 'new key (401)', now: new Date(), savedAt: current }))
    .toMatchObject({ newly: true });
  expect(await settingsOf(org)).toMatchObject({ state: 'paused', pausedReason: 'new key (401)' });
});

test('a webhook arriving while the run records the same order: one purchase, one receipt', async () => {
  const org = await seedWebhookOrg(h, { platforms: ['storefront-a'] });
  const orders = ordersOf(10);
  const sim = await simulator(orders);
  await enable(org, sim);
  const [run] = await Promise.all([runOnce(org), sendWebhooks(sim, org, orders)]);
  expect(run.lastResult!.recovered + run.lastResult!.alreadyKnown).toBe(10);
  await receiptsReach(org.orgId, 10);
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  expect(await receiptsOf(org.orgId)).toBe(10);
  expect(await h.orm.em.fork().count(Purchase, { organisation: org.orgId })).toBe(10);
});

test('settings: platforms without a client yet, one without an order API, origins only, members refused', async () => {
  const org = await seedWebhookOrg(h, { platforms: ['storefront-a'] });
  const put = (platform: string, payload: object) => h.app.inject({
    method: 'PUT', url: `/api/settings/integrations/${platform}/reconciliation`, headers: { authorization: `Bearer ${org.apiKey}` }, payload,
  });
  // The platforms whose clients are not written yet, while there are any.
  for (const platform of PLATFORMS.filter((p) => orderListClientOf(p) === undefined && !NO_ORDER_API.includes(p))) {
    expect((await put(platform, { enabled: true })).json()).toEqual({ error: `reconciliation is not available for ${platform} yet` });
  }
  expect((await put('reseller-d-classic', { enabled: true })).json()).toEqual({ error: 'reseller-d-classic has no order API' });
  expect((await put('nowhere', { enabled: true })).statusCode).toBe(404);
  const withPath = await put('storefront-a', { enabled: true, apiBaseUrl: 'http://127.0.0.1:1/admin', shopDomain: 'x.myshopify.com', accessToken: 'tok' });
  expect(withPath.statusCode).toBe(400);
  expect(withPath.json().error).toMatch(/origin only/);
  expect((await put('storefront-a', { enabled: true, shopDomain: 'x.myshopify.com' })).statusCode).toBe(400);
  const member = await seedUser(h, org.orgId, 'member');
  const asMember = await h.app.inject({ method: 'GET', url: '/api/settings/integrations/storefront-a/reconciliation', headers: { authorization: `Bearer ${member.apiKey}` } });
  expect(asMember.statusCode).toBe(403);
});
