/**
 * Orders fulfilled end to end per second: 2,000 distinct signed cart-e orders (one product each)
 * POSTed to the service, timed until every log entry is final (customer, purchase, token, receipt
 * sent through SMTP, outcome recorded); beside, in the same run on the same Temporal dev server, a
 * no-op workflow with the same three activities started 2,000 times and timed until its last
 * activity ran everywhere. Both with the SDK's default worker settings and the same concurrency of
 * starts.
 *
 *   npm run bench:build && node .bench-build/bench/webhooks/end-to-end-bench.js
 *
 * BENCH_ORDERS (default 2000), BENCH_IN_FLIGHT (default 32 concurrent POSTs or starts).
 * Targets: ≥ 200 orders/s and ≥ 0.6× the no-op baseline.
 */
import { randomBytes } from 'node:crypto';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Worker } from '@temporalio/worker';
import { seedWebhookOrg } from '../../test/helpers/webhooks';
import { startBenchWorld } from '../lib/world';
import type { noopFulfilment } from './noop-workflows';
import { signedOrders } from './signed-orders';
import { runBenchmark } from '../lib/run';

const ORDERS = Number(process.env.BENCH_ORDERS ?? 2000);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 32);
const TARGET_PER_SECOND = 200;
const TARGET_RATIO = 0.6;
/** Bounds every wait: the benchmark stops by itself. */
const MAX_WAIT_MS = 20 * 60_000;

/** Runs `work(0..count-1)` with at most `inFlight` at once. */
async function pool(count: number, inFlight: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(inFlight, count) }, async () => {
    while (next < count) {
      const i = next;
      next += 1;
      await work(i);
    }
  }));
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + MAX_WAIT_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const seconds = (from: bigint) => Number(process.hrtime.bigint() - from) / 1e9;

async function main(): Promise<void> {
  const world = await startBenchWorld();
  try {
    const { h } = world;
    const org = await seedWebhookOrg(h);
    const base = await h.app.listen({ host: '127.0.0.1', port: 0 });
    process.stdout.write(`${ORDERS} orders, ${IN_FLIGHT} in flight, one Temporal dev server, default worker settings\n`);

    // Baseline: the no-op workflow on its own task queue and worker.
    const taskQueue = `bench-noop-${randomBytes(4).toString('hex')}`;
    const connection = await NativeConnection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
    const bundle = await bundleWorkflowCode({ workflowsPath: require.resolve('./noop-workflows'), logger: new DefaultLogger('WARN') });
    let reported = 0;
    const worker = await Worker.create({
      connection,
      namespace: h.config.temporal.namespace,
      taskQueue,
      workflowBundle: bundle,
      activities: {
        noopRecord: async () => undefined,
        noopSend: async () => undefined,
        noopReport: async () => { reported += 1; },
      },
    });
    const running = worker.run();
    const noopStarted = process.hrtime.bigint();
    await pool(ORDERS, IN_FLIGHT, async (i) => {
      await h.temporal.workflow.start<typeof noopFulfilment>('noopFulfilment', { taskQueue, workflowId: `${taskQueue}-${i}`, args: [] });
    });
    await until(async () => reported >= ORDERS, 'the no-op runs');
    const noopSeconds = seconds(noopStarted);
    worker.shutdown();
    await running;
    await connection.close();

    // The service: real deliveries through HTTP, fulfilled by the service's worker.
    const orders = signedOrders('cart-e', org.orgId, 0, ORDERS);
    const started = process.hrtime.bigint();
    await pool(ORDERS, IN_FLIGHT, async (i) => {
      const order = orders[i];
      const res = await fetch(`${base}${order.path}`, { method: 'POST', headers: order.headers, body: new Uint8Array(order.body) });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`delivery ${i} answered ${res.status}`);
    });
    const ackSeconds = seconds(started);
    const em = h.orm.em.fork();
    const finalCount = async () => {
      const [row] = await em.execute<Array<{ n: string }>>(
        `select count(*) as n from webhook_delivery where organisation_id = ? and status <> 'Pending'`, [org.orgId],
      );
      return Number(row.n);
    };
    await until(async () => (await finalCount()) >= ORDERS, 'every entry to be final');
    const realSeconds = seconds(started);

    const [outcome] = await em.execute<Array<{ success: string; purchases: string; sent: string }>>(
      `select (select count(*) from webhook_delivery where organisation_id = ? and status = 'Success') as success,
              (select count(*) from purchase where organisation_id = ?) as purchases,
              (select count(*) from purchase where organisation_id = ? and receipt_status = 'sent') as sent`,
      [org.orgId, org.orgId, org.orgId],
    );
    if (Number(outcome.success) !== ORDERS || Number(outcome.sent) !== ORDERS) {
      throw new Error(`not every order was fulfilled: ${JSON.stringify(outcome)}`);
    }

    const noopPerSecond = ORDERS / noopSeconds;
    const realPerSecond = ORDERS / realSeconds;
    const ratio = realPerSecond / noopPerSecond;
    process.stdout.write(`no-op workflow (3 activities)   ${noopPerSecond.toFixed(1)} runs/s   (${noopSeconds.toFixed(1)} s)\n`);
    process.stdout.write(`service, end to end             ${realPerSecond.toFixed(1)} orders/s (${realSeconds.toFixed(1)} s; all ${ORDERS} acknowledged after ${ackSeconds.toFixed(1)} s)\n`);
    process.stdout.write(`service/no-op ${ratio.toFixed(2)}× (target ≥ ${TARGET_RATIO}×: ${ratio >= TARGET_RATIO ? 'met' : 'MISSED'}); `
      + `${realPerSecond.toFixed(1)} orders/s (target ≥ ${TARGET_PER_SECOND}: ${realPerSecond >= TARGET_PER_SECOND ? 'met' : 'MISSED'})\n`);
    process.stdout.write(`RESULT ${JSON.stringify({
      orders: ORDERS,
      inFlight: IN_FLIGHT,
      noop: { seconds: Number(noopSeconds.toFixed(2)), perSecond: Number(noopPerSecond.toFixed(1)) },
      service: { seconds: Number(realSeconds.toFixed(2)), ackSeconds: Number(ackSeconds.toFixed(2)), perSecond: Number(realPerSecond.toFixed(1)) },
      ratio: Number(ratio.toFixed(2)),
      targets: { perSecond: TARGET_PER_SECOND, ratio: TARGET_RATIO },
    })}\n`);
  } finally {
    await world.close();
  }
}

runBenchmark(main);
