/**
 * The reconciliation runs every platform's order list must pass (decisions §15, issue 27), against
 * that platform's simulator: 120 orders, 30 of which never came as webhooks, recovered by one run
 * and nothing twice; a 429 with `Retry-After: 2` waited out; refused credentials pausing the schedule
 * with one email. A platform's test file names its simulator, credentials and webhook body and calls
 * `reconciliationRuns`, whose answer lets it add runs of its own on the same harness (storefront-a's
 * own file, reconciliation.test.ts, covers more).
 */
import { Purchase, SentEmail, WebhookDelivery } from '../../src/db/entities';
import type { Platform } from '../../src/domain/platforms';
import { reconcileScheduleId } from '../../src/domain/reconciliation';
import type { ReconciliationJson } from '../../src/services/reconciliation';
import { startHarness, type Harness } from './harness';
import { seedUser } from './seed';
import type { OrderListServer } from './simulators/order-list-server';
import { eventually, seedWebhookOrg, send, type WebhookOrg } from './webhooks';

export interface ListedOrderSpec {
  id: string;
  email: string;
  updatedAt: Date;
}

export interface ReconciliationPlatform<Order extends ListedOrderSpec, Sim extends Pick<OrderListServer, 'origin' | 'requests' | 'throttleOnce' | 'revokeToken' | 'close'>> {
  platform: Platform;
  /** The `n`th order of a run (ids unique within the file), paid, changed at `updatedAt`. */
  order(n: number, updatedAt: Date): Order;
  /** The simulator of the organisation's account (payments-c's webhooks name it in their metadata). */
  start(orders: Order[], orgId: string): Promise<Sim>;
  /** The settings PUT's credentials for the simulator. */
  credentials(sim: Sim): Record<string, string>;
  /** Other credentials of the same account (saved to resume after a refusal). */
  newCredentials(sim: Sim): Record<string, string>;
  /** The webhook body the platform would have sent for the order. */
  webhookBody(sim: Sim, order: Order): Buffer;
  /** Answers of 200 the first run of 120 orders gets: its pages, and any lookups by id they need. */
  pagesOf120: number;
  /**
   * Orders the second run reads: those changed at or after `since` (the newest change of the first
   * run less an hour) as the platform's filter and its time resolution pick them.
   */
  secondRunPulled(orders: Order[], since: Date): number;
}

/** What a platform's file needs to add runs of its own on the same harness (it exists once `beforeAll` has run). */
export interface ReconciliationRunsContext<Order, Sim> {
  harness(): Harness;
  /** `count` paid orders changed a minute apart over the last hours, oldest first. */
  ordersOf(count: number): Order[];
  /** The platform's simulator of `orders`, closed after the file. */
  simulator(orders: Order[], orgId: string): Promise<Sim>;
  /** A call to the platform's reconciliation settings (`path` after `…/reconciliation`), as the organisation's owner. */
  api(org: WebhookOrg, method: 'GET' | 'PUT' | 'POST', path: string, payload?: object): Promise<{ statusCode: number }>;
  /** Turns reconciliation on against the simulator. */
  enable(org: WebhookOrg, sim: Sim): Promise<ReconciliationJson>;
  /** Starts a run now and waits for it to record its result. */
  runOnce(org: WebhookOrg): Promise<ReconciliationJson>;
  receiptsReach(orgId: string, count: number): Promise<unknown>;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

export function reconciliationRuns<Order extends ListedOrderSpec, Sim extends Pick<OrderListServer, 'origin' | 'requests' | 'throttleOnce' | 'revokeToken' | 'close'>>(
  spec: ReconciliationPlatform<Order, Sim>,
): ReconciliationRunsContext<Order, Sim> {
  const { platform } = spec;
  let h: Harness;
  const simulators: Sim[] = [];
  let made = 0;

  beforeAll(async () => {
    h = await startHarness({ env: { OUTBOUND_WEBHOOKS_ALLOW_PRIVATE: 'true', RECONCILE_INTERVAL: '1h' } });
  });
  afterAll(async () => {
    await Promise.all(simulators.map((s) => s.close()));
    await h?.close();
  });

  /** `count` paid orders changed a minute apart over the last hours, oldest first. */
  const ordersOf = (count: number): Order[] => {
    const now = Date.now();
    return Array.from({ length: count }, (_, i) => spec.order((made += 1), new Date(now - (count - i) * MINUTE)));
  };

  const simulator = async (orders: Order[], orgId: string): Promise<Sim> => {
    const sim = await spec.start(orders, orgId);
    simulators.push(sim);
    return sim;
  };

  const api = (org: WebhookOrg, method: 'GET' | 'PUT' | 'POST', path: string, payload?: object) => h.app.inject({
    method, url: `/api/settings/integrations/${platform}/reconciliation${path}`, headers: { authorization: `Bearer ${org.apiKey}` }, ...(payload ? { payload } : {}),
  });

  const settingsOf = async (org: WebhookOrg): Promise<ReconciliationJson> => {
    const res = await api(org, 'GET', '');
    expect(res.statusCode).toBe(200);
    return res.json();
  };

  const enable = async (org: WebhookOrg, sim: Sim): Promise<ReconciliationJson> => {
    const res = await api(org, 'PUT', '', { enabled: true, apiBaseUrl: sim.origin, ...spec.credentials(sim) });
    expect(res.statusCode).toBe(200);
    return res.json();
  };

  const runOnce = async (org: WebhookOrg): Promise<ReconciliationJson> => {
    const before = (await settingsOf(org)).lastRunAt;
    expect((await api(org, 'POST', '/run')).statusCode).toBe(202);
    // A run whose page fails every attempt waits 30 s in backoff alone (RECONCILE_PAGE); on a loaded CI machine it took past 60 s.
    return eventually(async () => {
      const now = await settingsOf(org);
      return now.lastRunAt !== before ? now : undefined;
    }, 120_000, 'the reconciliation run to finish');
  };

  const receiptsOf = (orgId: string): Promise<number> => h.orm.em.fork().count(SentEmail, { organisation: orgId, kind: 'receipt', status: 'sent' });
  const receiptsReach = (orgId: string, count: number) =>
    eventually(async () => ((await receiptsOf(orgId)) >= count ? true : undefined), 90_000, `${count} receipts`);

  test(`${platform}: one run recovers exactly the orders whose webhooks never came; a second run changes nothing`, async () => {
    const org = await seedWebhookOrg(h, { platforms: [platform] });
    const orders = ordersOf(120);
    const missed = new Set(orders.filter((_, i) => i % 4 === 1).map((o) => o.id));
    expect(missed.size).toBe(30);
    const sim = await simulator(orders, org.orgId);
    for (const order of orders.filter((o) => !missed.has(o.id))) {
      expect((await send(h.app, platform, org.orgId, spec.webhookBody(sim, order))).status).toBe(200);
    }
    await receiptsReach(org.orgId, 90);

    const enabled = await enable(org, sim);
    expect(enabled).toMatchObject({ enabled: true, state: 'active', pausedReason: null, apiBaseUrl: sim.origin });
    for (const value of Object.values(spec.credentials(sim))) expect(JSON.stringify(enabled)).not.toContain(value);

    const first = await runOnce(org);
    expect(first.lastResult).toEqual({ pulled: 120, recovered: 30, alreadyKnown: 90, errors: 0 });
    await receiptsReach(org.orgId, 120);
    const em = h.orm.em.fork();
    const purchases = await em.find(Purchase, { organisation: org.orgId, source: platform });
    expect(purchases).toHaveLength(120);
    expect(new Set(purchases.map((p) => p.externalOrderId)).size).toBe(120);
    const recovered = await em.find(WebhookDelivery, { organisation: org.orgId, source: 'reconciliation' });
    expect(new Set(recovered.map((d) => d.externalOrderId))).toEqual(missed);
    expect(sim.requests.filter((r) => r.status === 200)).toHaveLength(spec.pagesOf120);

    const second = await runOnce(org);
    const pulled = spec.secondRunPulled(orders, new Date(Math.max(...orders.map((o) => o.updatedAt.getTime())) - HOUR));
    expect(second.lastResult).toEqual({ pulled, recovered: 0, alreadyKnown: pulled, errors: 0 });
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await receiptsOf(org.orgId)).toBe(120);
    expect(await h.orm.em.fork().count(WebhookDelivery, { organisation: org.orgId })).toBe(120);
  });

  test(`${platform}: a 429 with Retry-After: 2 makes the run wait that long and complete`, async () => {
    const org = await seedWebhookOrg(h, { platforms: [platform] });
    const sim = await simulator(ordersOf(120), org.orgId);
    await enable(org, sim);
    sim.throttleOnce(1, 2);
    const done = await runOnce(org);
    expect(done.lastResult).toEqual({ pulled: 120, recovered: 120, alreadyKnown: 0, errors: 0 });
    const throttled = sim.requests.find((r) => r.status === 429)!;
    const retried = sim.requests.find((r) => r.page === 1 && r.status === 200)!;
    expect(throttled.page).toBe(1);
    expect(retried.at - throttled.at).toBeGreaterThanOrEqual(2_000);
    await receiptsReach(org.orgId, 120);
  });

  test(`${platform}: refused credentials (401) pause the schedule and email owners and admins once; saving them again resumes it`, async () => {
    const org = await seedWebhookOrg(h, { platforms: [platform] });
    const [admin, member] = [await seedUser(h, org.orgId, 'admin'), await seedUser(h, org.orgId, 'member')];
    const sim = await simulator(ordersOf(3), org.orgId);
    await enable(org, sim);
    sim.revokeToken();
    const paused = await runOnce(org);
    expect(paused).toMatchObject({ state: 'paused', nextRunAt: null, lastResult: { pulled: 0, recovered: 0, alreadyKnown: 0, errors: 1 } });
    expect(paused.pausedReason).toMatch(/401/);
    const handle = h.temporal.schedule.getHandle(reconcileScheduleId(org.orgId, platform));
    expect((await handle.describe()).state.paused).toBe(true);
    expect((await api(org, 'POST', '/run')).statusCode).toBe(409);
    const subject = `Reconciliation paused for ${platform}`;
    const mails = await eventually(async () => {
      const found = h.mailbox.messages().filter((m) => m.subject.startsWith(subject));
      return found.length > 0 ? found : undefined;
    });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(h.mailbox.messages().filter((m) => m.subject.startsWith(subject))).toHaveLength(1);
    // Owners and admins, not members.
    expect(mails[0].to).toHaveLength(2);
    expect(mails[0].to).toEqual(expect.arrayContaining([expect.stringMatching(/^owner-/), admin.email]));
    expect(mails[0].to).not.toContain(member.email);

    // New credentials alone: the stored origin is kept.
    const resumed = await api(org, 'PUT', '', { enabled: true, ...spec.newCredentials(sim) });
    expect(resumed.statusCode).toBe(200);
    expect(resumed.json()).toMatchObject({ state: 'active', pausedReason: null, apiBaseUrl: sim.origin });
    // The engine applies a schedule's update through its scheduler run: a busy engine shows it a moment later.
    await eventually(async () => ((await handle.describe()).state.paused ? undefined : true), 10_000, 'the schedule running again');
  });

  return { harness: () => h, ordersOf, simulator, api, enable, runOnce, receiptsReach };
}
