/**
 * Temporal down during a launch: a burst of BENCH_ORDERS (2,000) signed storefront-a orders posted
 * to the service (`npm start`, or BENCH_SHAPE=roles) while its Temporal server is stopped for
 * BENCH_OUTAGE_SECONDS (60) from the moment the first quarter is acknowledged, then started again on
 * the same state. Counted: refused answers (target 0), orders lost (entries never final, purchases
 * missing; target 0), duplicated purchases or receipts (target 0), the backlog's peak, and how long
 * it takes to drain once Temporal is back.
 *
 *   npm run build && npm run bench:build && node .bench-build/bench/webhooks/outage-bench.js
 */
import { seedWebhookOrg } from '../../test/helpers/webhooks';
import { percentile } from '../lib/percentile';
import { pool, secondsSince, until } from '../lib/pool';
import { runBenchmark } from '../lib/run';
import { startService, startSmtpSink, type ServiceShape } from '../lib/service';
import { signedOrders } from './signed-orders';

const ORDERS = Number(process.env.BENCH_ORDERS ?? 2000);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 32);
const OUTAGE_SECONDS = Number(process.env.BENCH_OUTAGE_SECONDS ?? 60);
const SHAPE = (process.env.BENCH_SHAPE ?? 'all-in-one') as ServiceShape;

async function main(): Promise<void> {
  const sink = await startSmtpSink();
  const service = await startService(SHAPE, sink.url);
  try {
    const org = await seedWebhookOrg(service, { platforms: ['storefront-a'] });
    const orders = signedOrders('storefront-a', org.orgId, 0, ORDERS, { oneLine: true });
    const em = service.orm.em.fork();
    const waiting = async () => Number((await em.execute<Array<{ n: string }>>('select count(*) as n from workflow_dispatch'))[0].n);
    process.stdout.write(`${ORDERS} orders, ${IN_FLIGHT} in flight, ${SHAPE}; Temporal stopped for ${OUTAGE_SECONDS} s after ${ORDERS / 4} acks\n`);

    let acknowledged = 0;
    let refused = 0;
    let peakWaiting = 0;
    let outage: Promise<void> | undefined;
    let backAt: bigint | undefined;
    const latencies: number[] = [];
    const started = process.hrtime.bigint();
    const sampler = setInterval(() => {
      void waiting().then((n) => { peakWaiting = Math.max(peakWaiting, n); }, () => undefined);
    }, 500);
    await pool(ORDERS, IN_FLIGHT, async (i) => {
      const order = orders[i];
      const sent = process.hrtime.bigint();
      const res = await fetch(`${service.base}${order.path}`, { method: 'POST', headers: order.headers, body: new Uint8Array(order.body) });
      await res.arrayBuffer();
      latencies.push(secondsSince(sent) * 1000);
      if (res.status !== 200) {
        refused += 1;
        return;
      }
      acknowledged += 1;
      if (acknowledged === ORDERS / 4 && !outage) {
        process.stdout.write(`  ${acknowledged} acknowledged after ${secondsSince(started).toFixed(1)} s: stopping Temporal\n`);
        outage = (async () => {
          await service.temporal.stop();
          await new Promise((r) => setTimeout(r, OUTAGE_SECONDS * 1000));
          await service.temporal.start();
          backAt = process.hrtime.bigint();
          process.stdout.write(`  Temporal back after ${OUTAGE_SECONDS} s (${await waiting()} starts waiting in the outbox)\n`);
        })();
      }
    });
    const ackSeconds = secondsSince(started);
    process.stdout.write(`  all ${ORDERS} answered after ${ackSeconds.toFixed(1)} s (${refused} refused)\n`);
    await outage;
    await until(async () => sink.received() >= ORDERS && (await waiting()) === 0, 'every receipt after the outage');
    // A moment for any duplicate to show itself.
    await new Promise((r) => setTimeout(r, 5_000));
    clearInterval(sampler);
    const drainSeconds = secondsSince(backAt!);

    const [counts] = await em.execute<Array<{ purchases: string; distinct_orders: string; final: string; success: string }>>(
      `select (select count(*) from purchase where organisation_id = ?) as purchases,
              (select count(distinct external_order_id) from purchase where organisation_id = ?) as distinct_orders,
              (select count(*) from webhook_delivery where organisation_id = ? and status <> 'Pending') as final,
              (select count(*) from webhook_delivery where organisation_id = ? and status = 'Success') as success`,
      [org.orgId, org.orgId, org.orgId, org.orgId],
    );
    const p99 = percentile(latencies, 0.99);
    const lost = ORDERS - refused - Number(counts.distinct_orders);
    const duplicated = Number(counts.purchases) - Number(counts.distinct_orders) + Math.max(0, sink.received() - Number(counts.purchases));
    const rss = service.peakRssMb();
    process.stdout.write(`  refused ${refused}, lost ${lost}, duplicated ${duplicated} (targets 0: ${refused === 0 && lost === 0 && duplicated === 0 ? 'met' : 'MISSED'}); `
      + `entries final ${counts.final}/${ORDERS}, Success ${counts.success}; ack p99 ${p99.toFixed(0)} ms; `
      + `outbox peak ${peakWaiting} rows; drained ${drainSeconds.toFixed(1)} s after Temporal came back; peak RSS ${JSON.stringify(rss)} MB\n`);
    process.stdout.write(`RESULT ${JSON.stringify({
      orders: ORDERS, shape: SHAPE, outageSeconds: OUTAGE_SECONDS, refused, lost, duplicated,
      receipts: sink.received(), final: Number(counts.final), success: Number(counts.success), ackP99Ms: Math.round(p99),
      peakWaiting, drainSeconds: Number(drainSeconds.toFixed(1)), peakRssMb: rss,
    })}\n`);
    if (refused > 0 || lost > 0 || duplicated > 0) throw new Error('orders were refused, lost or duplicated during the outage');
  } finally {
    await service.close();
    await sink.close();
  }
}

runBenchmark(main);
