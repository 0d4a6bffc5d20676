/**
 * Missed-webhook reconciliation (decisions §15) for plugin-b, end to end against a local simulator of
 * its REST order list (test/helpers/simulators/plugin-b.ts): the runs every platform passes
 * (test/helpers/reconciliation-runs.ts). Real PostgreSQL, Temporal, SMTP sink.
 */
import { reconciliationRuns } from '../helpers/reconciliation-runs';
import { startPluginBSimulator, type PluginBSimulator, type SimulatedOrder } from '../helpers/simulators/plugin-b';

reconciliationRuns<SimulatedOrder, PluginBSimulator>({
  platform: 'plugin-b',
  order: (n, updatedAt) => ({ id: String(4_810_000 + n), email: `buyer-${n}@example.com`, updatedAt }),
  start: (orders) => startPluginBSimulator(orders),
  credentials: (sim) => ({ consumerKey: sim.consumerKey, consumerSecret: sim.consumerSecret }),
  newCredentials: () => ({ consumerKey: 'ck_a_new_read_key', consumerSecret: 'cs_a_new_read_secret' }),
  webhookBody: (sim, order) => Buffer.from(sim.orderJson(order)),
  // Pages of 50 by number.
  pagesOf120: 3,
  // From the newest change less an hour, to the second and including it: the last 61 of the minute-spaced orders.
  secondRunPulled: () => 61,
});
