/**
 * Missed-webhook reconciliation (decisions §15) for payments-c, end to end against a local simulator
 * of its Checkout Session list (test/helpers/simulators/payments-c.ts): the runs every platform passes
 * (test/helpers/reconciliation-runs.ts). Real PostgreSQL, Temporal, SMTP sink.
 *
 * @mostly-waiting the runs' backoff and Retry-After waits (alone: the cores 31 % busy)
 */
import { reconciliationRuns, type ListedOrderSpec } from '../helpers/reconciliation-runs';
import { startPaymentsCSimulator, type PaymentsCSimulator } from '../helpers/simulators/payments-c';
import { eventually, seedWebhookOrg } from '../helpers/webhooks';

const sessionOf = (order: ListedOrderSpec) => ({ id: order.id, email: order.email, created: order.updatedAt });

const runs = reconciliationRuns<ListedOrderSpec, PaymentsCSimulator>({
  platform: 'payments-c',
  order: (n, updatedAt) => ({ id: `cs_live_sim${n}ExampleCheckoutSession`, email: `buyer-${n}@example.com`, updatedAt }),
  // The webhook's shared route knows the organisation by the metadata the seller set; the list is the integration's own.
  start: (orders, orgId) => startPaymentsCSimulator(orders.map(sessionOf), { metadata: { org_id: orgId } }),
  credentials: (sim) => ({ secretKey: sim.secretKey }),
  newCredentials: () => ({ secretKey: 'rk_test_aNewCheckoutSessionsReadKey' }),
  webhookBody: (sim, order) => sim.eventBody(sessionOf(order)),
  // Pages of 50, by `starting_after`.
  pagesOf120: 3,
  // `created[gte]` in whole seconds, of `created` in whole seconds.
  secondRunPulled: (orders, since) => orders.filter((o) => Math.floor(o.updatedAt.getTime() / 1000) >= Math.floor(since.getTime() / 1000)).length,
});

// The run's activity tries a page 5 times (src/domain/activity-policy.ts, RECONCILE_PAGE).
const PAGE_ATTEMPTS = 5;

test('payments-c: a page that fails every attempt leaves the high-water mark, so the next run reads the older orders behind it (the list is newest first)', async () => {
  const org = await seedWebhookOrg(runs.harness(), { platforms: ['payments-c'] });
  // 120 orders a minute apart, never sent as webhooks: pages of 50, newest first; page 1 holds the orders 50 to 100 minutes old.
  const sim = await runs.simulator(runs.ordersOf(120), org.orgId);
  await runs.enable(org, sim);
  sim.failPage(1, PAGE_ATTEMPTS);

  const first = await runs.runOnce(org);
  expect(first.lastResult).toEqual({ pulled: 50, recovered: 50, alreadyKnown: 0, errors: 1 });
  expect(sim.requests.filter((r) => r.page === 1).map((r) => r.status)).toEqual(Array(PAGE_ATTEMPTS).fill(500));

  // Had the first run's newest order moved the mark, this run would read only its last hour.
  const second = await runs.runOnce(org);
  expect(second.lastResult).toEqual({ pulled: 120, recovered: 70, alreadyKnown: 50, errors: 0 });
  await runs.receiptsReach(org.orgId, 120);
}, 300_000);

test('payments-c: reconciliation turned off during a run leaves the high-water mark, so a run after it is on again reads the older orders', async () => {
  const org = await seedWebhookOrg(runs.harness(), { platforms: ['payments-c'] });
  const sim = await runs.simulator(runs.ordersOf(120), org.orgId);
  await runs.enable(org, sim);
  // Page 1 fails twice (its retries come 2 s and 6 s later): turned off as soon as the first failure is seen.
  sim.failPage(1, 2);
  const stopped = runs.runOnce(org);
  await eventually(async () => (sim.requests.some((r) => r.page === 1 && r.status === 500) ? true : undefined), 60_000, 'page 1 to fail');
  const off = await runs.api(org, 'PUT', '', { enabled: false });
  expect(off.statusCode).toBe(200);
  expect((await stopped).lastResult).toEqual({ pulled: 50, recovered: 50, alreadyKnown: 0, errors: 0 });

  await runs.enable(org, sim);
  const after = await runs.runOnce(org);
  expect(after.lastResult).toEqual({ pulled: 120, recovered: 70, alreadyKnown: 50, errors: 0 });
  await runs.receiptsReach(org.orgId, 120);
}, 300_000);
