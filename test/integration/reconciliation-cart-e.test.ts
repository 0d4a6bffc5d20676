/**
 * Missed-webhook reconciliation (decisions §15) for cart-e, end to end against a local simulator of
 * its Sales API (test/helpers/simulators/cart-e.ts): the runs every platform passes
 * (test/helpers/reconciliation-runs.ts). Real PostgreSQL, Temporal, SMTP sink.
 */
import { reconciliationRuns, type ListedOrderSpec } from '../helpers/reconciliation-runs';
import { startCartESimulator, type CartESimulator } from '../helpers/simulators/cart-e';

const saleOf = (order: ListedOrderSpec) => ({ id: order.id, email: order.email, createdAt: order.updatedAt });

reconciliationRuns<ListedOrderSpec, CartESimulator>({
  platform: 'cart-e',
  order: (n, updatedAt) => ({ id: `CartE${n}x9pQ2rT5vW8yZ1bC4==`, email: `buyer-${n}@example.com`, updatedAt }),
  start: (orders) => startCartESimulator(orders.map(saleOf)),
  credentials: (sim) => ({ accessToken: sim.accessToken }),
  newCredentials: () => ({ accessToken: 'gumroad_a_new_view_sales_token' }),
  webhookBody: (sim, order) => sim.pingBody(saleOf(order)),
  // Pages of 10, by page key.
  pagesOf120: 12,
  // `after` is a day: every sale of the since's whole UTC day.
  secondRunPulled: (orders, since) => orders.filter((o) => o.updatedAt.getTime() >= Date.parse(`${since.toISOString().slice(0, 10)}T00:00:00Z`)).length,
});
