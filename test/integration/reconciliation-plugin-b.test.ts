/**
 * Missed-webhook reconciliation (decisions §15) for plugin-b, end to end against a local simulator of
 * its REST order list (test/helpers/simulators/plugin-b.ts): the runs every platform passes
 * (test/helpers/reconciliation-runs.ts), and an order modified while a run reads the pages. Real
 * PostgreSQL, Temporal, SMTP sink.
 */
import { Purchase, WebhookDelivery } from '../../src/db/entities';
import { reconciliationRuns } from '../helpers/reconciliation-runs';
import { startPluginBSimulator, type PluginBSimulator, type SimulatedOrder } from '../helpers/simulators/plugin-b';
import { seedWebhookOrg } from '../helpers/webhooks';

const runs = reconciliationRuns<SimulatedOrder, PluginBSimulator>({
  platform: 'plugin-b',
  order: (n, updatedAt) => ({ id: String(4_810_000 + n), email: `buyer-${n}@example.com`, updatedAt }),
  start: (orders) => startPluginBSimulator(orders),
  credentials: (sim) => ({ consumerKey: sim.consumerKey, consumerSecret: sim.consumerSecret }),
  newCredentials: () => ({ consumerKey: 'ck_a_new_read_key', consumerSecret: 'cs_a_new_read_secret' }),
  webhookBody: (sim, order) => Buffer.from(sim.orderJson(order)),
  // Pages of 50: each next one asks again from the last order's modification time (which it reads again and drops).
  pagesOf120: 3,
  // From the newest change less an hour, to the second and including it: the last 61 of the minute-spaced orders.
  secondRunPulled: () => 61,
});

test('plugin-b: an order modified after the first page moves to the end of the list; the run still records every order, each once', async () => {
  const h = runs.harness();
  const org = await seedWebhookOrg(h, { platforms: ['plugin-b'] });
  const orders = runs.ordersOf(120);
  const sim = await runs.simulator(orders, org.orgId);
  await runs.enable(org, sim);
  // Numbered pages would now skip the 51st order: it slides onto page 1, already read.
  const touched = orders[10].id;
  sim.afterPage(0, () => sim.touch(touched));

  const done = await runs.runOnce(org);
  const em = h.orm.em.fork();
  const recovered = await em.find(WebhookDelivery, { organisation: org.orgId, source: 'reconciliation' });
  expect(recovered.map((d) => d.externalOrderId).sort()).toEqual(orders.map((o) => o.id).sort());
  // The modified order is read again at its new place, as the order it already recorded.
  expect(done.lastResult).toEqual({ pulled: 121, recovered: 120, alreadyKnown: 1, errors: 0 });
  await runs.receiptsReach(org.orgId, 120);
  const purchases = await em.find(Purchase, { organisation: org.orgId, source: 'plugin-b' });
  expect(purchases).toHaveLength(120);
  expect(new Set(purchases.map((p) => p.externalOrderId)).size).toBe(120);
});
