/**
 * Missed-webhook reconciliation (decisions §15) for reseller-d, end to end against a local simulator
 * of its order list (test/helpers/simulators/reseller-d.ts): the runs every platform passes
 * (test/helpers/reconciliation-runs.ts). Real PostgreSQL, Temporal, SMTP sink.
 */
import { reconciliationRuns } from '../helpers/reconciliation-runs';
import { startResellerDSimulator, type ResellerDSimulator, type SimulatedOrder } from '../helpers/simulators/reseller-d';

reconciliationRuns<SimulatedOrder, ResellerDSimulator>({
  platform: 'reseller-d',
  order: (n, updatedAt) => ({ id: `rdRecon${String(n).padStart(6, '0')}`, email: `buyer-${n}@example.com`, updatedAt }),
  start: (orders) => startResellerDSimulator(orders),
  credentials: (sim) => ({ username: sim.username, password: sim.password }),
  newCredentials: () => ({ username: 'RD_API_USER_NEW', password: 'a-new-api-password' }),
  webhookBody: (sim, order) => Buffer.from(sim.webhookJson(order)),
  // Pages of 50 ids by number, each followed by one lookup of its 50 orders by id: six 200s.
  pagesOf120: 6,
  // Dates only, from the day before the newest change less an hour: every order of the last two hours again.
  secondRunPulled: () => 120,
});
