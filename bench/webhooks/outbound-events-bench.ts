/**
 * What outbound events cost fulfilment: BENCH_ORDERS (2,000) signed storefront-a orders fulfilled
 * end to end (until every receipt is in the SMTP sink) by an organisation without endpoints, then
 * by one with three (a healthy one, a slow one answering after 2 s, a failing one answering 500),
 * then by a third without endpoints again, in the same run on the same service. The baseline is the
 * mean of the two phases without endpoints, which bracket the one with them: each phase runs on a
 * database and an engine history that the phases before grew, and run in the order A-A-B the same
 * code measured 24.2, 21.2 and 18.7 orders/s, so a baseline taken only before would charge that
 * drift to the events. Prints the ratio (target ≥ 0.9×) and the delivery latency to the healthy
 * endpoint (from the event's time to its arrival), p50 and p99.
 * Each phase starts once the outbox is empty: bulk work (buyer reminders) that the phase before
 * left waiting behind its sales is started first, so each phase pays for its own work only. The
 * last phase also waits until no outbound delivery is waiting (every event delivered or failed), so
 * it does not pay for the events either.
 *
 *   npm run build && npm run bench:build && node .bench-build/bench/webhooks/outbound-events-bench.js
 *
 * BENCH_ORDERS (default 2000), BENCH_IN_FLIGHT (default 32 concurrent POSTs), BENCH_SHAPE
 * (all-in-one or roles).
 */
import { seedWebhookOrg } from '../../test/helpers/webhooks';
import { startReceiver, type Receiver } from '../../test/helpers/receivers';
import { scrape } from '../lib/metrics';
import { percentile } from '../lib/percentile';
import { pool, secondsSince, until } from '../lib/pool';
import { runBenchmark } from '../lib/run';
import { runtimeName, startService, startSmtpSink, type RunningService, type ServiceShape, type SmtpSink } from '../lib/service';
import { signedOrders } from './signed-orders';

const ORDERS = Number(process.env.BENCH_ORDERS ?? 2_000);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 32);
const WARM_UP = 200;
const SHAPE = (process.env.BENCH_SHAPE ?? 'all-in-one') as ServiceShape;
const TARGET_RATIO = 0.9;
const SETTLE_MS = 5_000;

/**
 * Waits until the service's outbox is empty: what the phase before left to start (its buyers'
 * reminders, bulk work claimed after its sales) is in the engine, so the next phase does not pay
 * for it. Then a few seconds more for the engine to take up those runs' first tasks.
 */
async function settled(service: RunningService): Promise<void> {
  await until(async () => {
    const ready = await (await fetch(`${service.base}/readyz`)).json() as { outbox: { waiting: number } | null };
    return ready.outbox?.waiting === 0;
  }, 'the outbox to empty');
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
}

/** Sends `count` orders of a new organisation (from order number `first`) and waits for every receipt; orders/s. */
async function fulfil(service: RunningService, sink: SmtpSink, orgId: string, first: number, count: number): Promise<number> {
  const orders = signedOrders('storefront-a', orgId, first, count, { oneLine: true });
  const before = sink.received();
  const started = process.hrtime.bigint();
  await pool(count, IN_FLIGHT, async (i) => {
    for (;;) {
      const res = await fetch(`${service.base}${orders[i].path}`, { method: 'POST', headers: orders[i].headers, body: new Uint8Array(orders[i].body) });
      await res.arrayBuffer();
      if (res.status === 200) return;
      if (res.status !== 503) throw new Error(`delivery ${i} answered ${res.status}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  });
  await until(() => sink.received() - before >= count, 'every receipt in the SMTP sink');
  return count / secondsSince(started);
}

async function main(): Promise<void> {
  const sink = await startSmtpSink();
  const service = await startService(SHAPE, sink.url, { OUTBOUND_WEBHOOKS_ALLOW_PRIVATE: 'true', OUTBOUND_RETRY_SCHEDULE: '5s,5m' });
  const receivers: Receiver[] = [];
  try {
    process.stdout.write(`${ORDERS} orders, ${IN_FLIGHT} in flight, ${SHAPE}, ${runtimeName()}\n`);
    const warm = await seedWebhookOrg(service, { platforms: ['storefront-a'] });
    await fulfil(service, sink, warm.orgId, 0, WARM_UP);
    await settled(service);

    const plain = await seedWebhookOrg(service, { platforms: ['storefront-a'] });
    const before = await fulfil(service, sink, plain.orgId, 0, ORDERS);
    process.stdout.write(`without endpoints                    ${before.toFixed(1)} orders/s\n`);
    await settled(service);

    const subscribed = await seedWebhookOrg(service, { platforms: ['storefront-a'] });
    const healthy = await startReceiver(() => ({ status: 204 }));
    const slow = await startReceiver(() => ({ status: 200, delayMs: 2_000 }));
    const failing = await startReceiver(() => ({ status: 500 }));
    receivers.push(healthy, slow, failing);
    for (const r of receivers) {
      const res = await fetch(`${service.base}/api/webhook-endpoints`, {
        method: 'POST', headers: { authorization: `Bearer ${subscribed.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ url: r.url }),
      });
      if (res.status !== 201) throw new Error(`endpoint not added: ${res.status} ${await res.text()}`);
    }
    const withEndpoints = await fulfil(service, sink, subscribed.orgId, 0, ORDERS);
    process.stdout.write(`with 3 endpoints (1 slow, 1 failing) ${withEndpoints.toFixed(1)} orders/s\n`);
    await until(() => healthy.uniqueIds().size >= ORDERS, 'every event at the healthy endpoint');
    const latencies = healthy.received.map((r) => r.at - Date.parse((JSON.parse(r.body) as { timestamp: string }).timestamp));
    const p50 = percentile(latencies, 0.5);
    const p99 = percentile(latencies, 0.99);
    process.stdout.write(`healthy endpoint latency p50 ${p50} ms, p99 ${p99} ms; slow endpoint got ${slow.uniqueIds().size}, failing ${failing.received.length} attempts so far\n`);
    await until(async () => {
      const waiting = (await scrape(service.base)).get('delivery_outbound_deliveries_waiting');
      if (waiting === undefined) throw new Error('no delivery_outbound_deliveries_waiting in /metrics');
      return waiting === 0;
    }, 'every outbound delivery delivered or failed', { everyMs: 1_000 });
    await settled(service);

    const plainAgain = await seedWebhookOrg(service, { platforms: ['storefront-a'] });
    const after = await fulfil(service, sink, plainAgain.orgId, 0, ORDERS);
    process.stdout.write(`without endpoints, again             ${after.toFixed(1)} orders/s\n`);

    const withoutEndpoints = (before + after) / 2;
    const ratio = withEndpoints / withoutEndpoints;
    process.stdout.write(`with / mean without ${ratio.toFixed(2)}× (target ≥ ${TARGET_RATIO}×: ${ratio >= TARGET_RATIO ? 'met' : 'MISSED'}); `
      + `with / the first without alone ${(withEndpoints / before).toFixed(2)}×\n`);
    process.stdout.write(`RESULT ${JSON.stringify({
      orders: ORDERS, inFlight: IN_FLIGHT, shape: SHAPE,
      withoutEndpoints: { perSecond: Number(withoutEndpoints.toFixed(1)), before: Number(before.toFixed(1)), after: Number(after.toFixed(1)) },
      withEndpoints: { perSecond: Number(withEndpoints.toFixed(1)) },
      ratio: Number(ratio.toFixed(2)),
      healthyLatencyMs: { p50, p99 },
      target: TARGET_RATIO,
    })}\n`);
  } finally {
    for (const r of receivers) await r.close();
    await service.close();
    await sink.close();
  }
}

runBenchmark(main);
