/**
 * Missed-webhook reconciliation (decisions §15) for payments-c, end to end against a local simulator
 * of its Checkout Session list (test/helpers/simulators/payments-c.ts): the runs every platform passes
 * (test/helpers/reconciliation-runs.ts). Real PostgreSQL, Temporal, SMTP sink.
 */
import { reconciliationRuns, type ListedOrderSpec } from '../helpers/reconciliation-runs';
import { startPaymentsCSimulator, type PaymentsCSimulator } from '../helpers/simulators/payments-c';

const sessionOf = (order: ListedOrderSpec) => ({ id: order.id, email: order.email, created: order.updatedAt });

reconciliationRuns<ListedOrderSpec, PaymentsCSimulator>({
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
