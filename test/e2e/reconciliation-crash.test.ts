/**
 * Reconciliation across worker processes (decisions §15): the worker process running a reconciliation run
 * (from the build, as `npm run start:worker` runs it) is SIGKILLed between pages, and another is
 * started. The run continues from the last page it finished: every order recovered once, one
 * purchase and one receipt each. The simulator answers page 2 once with a 429 asking for 20 s, so
 * the run waits there (a durable timer); the kill lands once the run's history shows that wait, not
 * at a guessed moment, which on a busy machine could fall inside a page's activity (that one is
 * retried only after its two-minute timeout). And a worker process started with another
 * RECONCILE_INTERVAL moves the schedules saved before to it.
 */
import { Purchase, SentEmail } from '../../src/db/entities';
import { reconcileScheduleId } from '../../src/domain/reconciliation';
import { startHarness, type Harness } from '../helpers/harness';
import { waitForOutput } from '../../src/dev/child-processes';
import { workerProcesses } from '../helpers/worker-process';
import { startStorefrontASimulator, type StorefrontASimulator } from '../helpers/simulators/storefront-a';
import { eventually, seedWebhookOrg } from '../helpers/webhooks';

const ENV = { OUTBOUND_WEBHOOKS_ALLOW_PRIVATE: 'true', RECONCILE_INTERVAL: '1h' };
const ORDERS = 200;
const THROTTLED_PAGE = 2;

let h: Harness;
let sim: StorefrontASimulator | undefined;
const workers = workerProcesses(() => h, ENV);

beforeAll(async () => {
  h = await startHarness({ worker: false, env: ENV });
}, 300_000);
afterAll(async () => {
  workers.close();
  await sim?.close();
  await h?.close();
});

test('a worker SIGKILLed mid-run: the run continues from the last finished page, no order twice', async () => {
  const org = await seedWebhookOrg(h, { platforms: ['storefront-a'] });
  const now = Date.now();
  sim = await startStorefrontASimulator(Array.from({ length: ORDERS }, (_, i) => ({
    id: String(5_901_000_200_000 + i), email: `crash-${i}@example.com`, updatedAt: new Date(now - (ORDERS - i) * 10_000),
  })));
  sim.throttleOnce(THROTTLED_PAGE, 20);
  const headers = { authorization: `Bearer ${org.apiKey}` };
  const put = await h.app.inject({
    method: 'PUT', url: '/api/settings/integrations/storefront-a/reconciliation', headers,
    payload: { enabled: true, apiBaseUrl: sim.origin, shopDomain: 'example-store.myshopify.com', accessToken: sim.accessToken },
  });
  expect(put.statusCode).toBe(200);

  const first = await workers.start();
  expect((await h.app.inject({ method: 'POST', url: '/api/settings/integrations/storefront-a/reconciliation/run', headers })).statusCode).toBe(202);
  await eventually(async () => (sim!.requests.some((r) => r.status === 429) ? true : undefined), 60_000, 'the throttled page');
  await eventually(() => runIsWaiting(org.orgId), 15_000, 'the run in its Retry-After wait');
  first.child.kill('SIGKILL');
  const pagesBeforeKill = sim.requests.length;
  await workers.start();

  const done = await eventually(async () => {
    const res = await h.app.inject({ method: 'GET', url: '/api/settings/integrations/storefront-a/reconciliation', headers });
    // Only the settings count: an error's body has no lastRunAt either. A 5xx on a machine this busy
    // is asked again; a 4xx fails here.
    if (res.statusCode >= 500) return undefined;
    expect(res.statusCode).toBe(200);
    const body = res.json() as { lastRunAt: string | null; lastResult: unknown };
    return body.lastRunAt === null ? undefined : body;
  }, 120_000, 'the run to finish');
  expect(done.lastResult).toEqual({ pulled: ORDERS, recovered: ORDERS, alreadyKnown: 0, errors: 0 });
  // Continued, not restarted: the pages read before the kill were not asked for again.
  const pages = sim.requests.filter((r) => r.status === 200).map((r) => r.page);
  expect(pages).toEqual([0, 1, 2, 3]);
  expect(pagesBeforeKill).toBe(THROTTLED_PAGE + 1);

  await eventually(async () => (await h.orm.em.fork().count(SentEmail, { organisation: org.orgId, kind: 'receipt', status: 'sent' }) >= ORDERS ? true : undefined),
    120_000, 'every receipt');
  expect(await h.orm.em.fork().count(Purchase, { organisation: org.orgId })).toBe(ORDERS);
}, 300_000);

test('a worker started with another RECONCILE_INTERVAL moves every enabled schedule to it, a paused one staying paused', async () => {
  const headers = (org: { apiKey: string }) => ({ authorization: `Bearer ${org.apiKey}` });
  const settings = await startStorefrontASimulator([]);
  try {
    const running = await seedWebhookOrg(h, { platforms: ['storefront-a'] });
    const paused = await seedWebhookOrg(h, { platforms: ['storefront-a'] });
    const off = await seedWebhookOrg(h, { platforms: ['storefront-a'] });
    for (const org of [running, paused, off]) {
      const put = await h.app.inject({
        method: 'PUT', url: '/api/settings/integrations/storefront-a/reconciliation', headers: headers(org),
        payload: { enabled: true, apiBaseUrl: settings.origin, shopDomain: 'example-store.myshopify.com', accessToken: settings.accessToken },
      });
      expect(put.statusCode).toBe(200);
    }
    const disable = await h.app.inject({ method: 'PUT', url: '/api/settings/integrations/storefront-a/reconciliation', headers: headers(off), payload: { enabled: false } });
    expect(disable.statusCode).toBe(200);
    const handle = (orgId: string) => h.temporal.schedule.getHandle(reconcileScheduleId(orgId, 'storefront-a'));
    await handle(paused.orgId).pause('credentials refused');
    expect((await handle(running.orgId).describe()).spec.intervals?.[0]?.every).toBe(3_600_000);

    const halfHourly = workerProcesses(() => h, { ...ENV, RECONCILE_INTERVAL: '30m' });
    try {
      const worker = await halfHourly.start();
      // The count covers every enabled integration of this file's database, the test above's too.
      await waitForOutput(worker, /moved \d+ reconciliation schedule\(s\) to the configured RECONCILE_INTERVAL/, 60_000);
      for (const org of [running, paused]) expect((await handle(org.orgId).describe()).spec.intervals?.map((i) => i.every)).toEqual([1_800_000]);
      expect((await handle(running.orgId).describe()).state.paused).toBe(false);
      expect((await handle(paused.orgId).describe()).state).toMatchObject({ paused: true, note: 'credentials refused' });
      await expect(handle(off.orgId).describe()).rejects.toThrow(/not found/i);
    } finally {
      halfHourly.close();
    }
  } finally {
    await settings.close();
  }
}, 180_000);

/** True once the run's latest history event is the timer its 429 asked for (started, not yet fired). */
async function runIsWaiting(orgId: string): Promise<true | undefined> {
  const description = await h.temporal.schedule.getHandle(reconcileScheduleId(orgId, 'storefront-a')).describe();
  const running = description.info.runningActions[0];
  if (!running) return undefined;
  const { events } = await h.temporal.workflow.getHandle(running.workflow.workflowId).fetchHistory();
  const last = events?.[events.length - 1];
  return last?.timerStartedEventAttributes ? true : undefined;
}
