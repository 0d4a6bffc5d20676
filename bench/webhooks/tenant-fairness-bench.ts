/**
 * Security review H1: one tenant's flood must delay only itself. Two organisations on one service
 * (`npm start`): the big one sends BENCH_BIG_RATE (300) orders/s, the small one BENCH_SMALL_RATE
 * (5) orders/s, for BENCH_SECONDS (30) s; the small one's receipt latency (delivery sent → receipt in
 * the SMTP sink) at the 99th percentile, against the same run's baseline: the small one alone, the
 * big one idle, first.
 *
 *   npm run build && npm run bench:build && node .bench-build/bench/webhooks/tenant-fairness-bench.js
 *
 * Target: small tenant's p99 with the flood ≤ 2× its p99 alone.
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { signFor } from '../../test/fixtures/platforms';
import { contentTypeOf, orderBody, SECRETS, seedWebhookOrg, webhookPath, withEmail } from '../../test/helpers/webhooks';
import { until } from '../lib/pool';
import { runBenchmark } from '../lib/run';
import { engineName, startService, startSmtpSink, type SmtpSink } from '../lib/service';
import { signedOrders, type SignedOrder } from './signed-orders';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const BIG_RATE = Number(process.env.BENCH_BIG_RATE ?? 300);
const SMALL_RATE = Number(process.env.BENCH_SMALL_RATE ?? 5);
const TARGET_RATIO = 2;

/** The small tenant's orders: cart-e, each to its own buyer so that its receipt can be timed. */
function smallOrders(orgId: string, phase: string, count: number): Array<SignedOrder & { email: string }> {
  return Array.from({ length: count }, (_, n) => {
    const email = `small-${phase}-${n}@example.com`;
    const body = withEmail('cart-e', orderBody('cart-e', orgId, `small-${phase}-${n}`), email);
    const signed = signFor('cart-e', body, SECRETS['cart-e']);
    const query = new URLSearchParams(signed.query).toString();
    return { email, body, path: `${webhookPath('cart-e', orgId)}${query ? `?${query}` : ''}`, headers: { 'content-type': contentTypeOf('cart-e'), ...signed.headers } };
  });
}

/**
 * POSTs a delivery until it is recorded, as a platform retries a 503 or a connection the service
 * dropped (thousands of open sockets at 300/s). Returns how many times it was refused.
 */
async function deliver(base: string, order: SignedOrder): Promise<number> {
  for (let refused = 0; ; refused += 1) {
    let retryAfterSeconds = 1;
    try {
      const res = await fetch(`${base}${order.path}`, { method: 'POST', headers: order.headers, body: new Uint8Array(order.body) });
      await res.arrayBuffer();
      if (res.status === 200) return refused;
      if (res.status !== 503) throw new Error(`delivery answered ${res.status}`);
      retryAfterSeconds = Number(res.headers.get('retry-after') ?? 1);
    } catch (error) {
      if (!(error instanceof TypeError)) throw error;
    }
    await new Promise((r) => setTimeout(r, 1_000 * retryAfterSeconds));
  }
}

/**
 * Sends `orders` at `perSecond`, each at its own moment (an open loop: a slow answer does not slow
 * the next send); returns how many 503s they got and retried.
 */
async function paced<T extends SignedOrder>(base: string, orders: T[], perSecond: number, sent: (order: T, at: number) => void = () => undefined): Promise<number> {
  const start = Date.now();
  const refused = await Promise.all(orders.map(async (order, i) => {
    await new Promise((r) => setTimeout(r, Math.max(0, start + (i * 1_000) / perSecond - Date.now())));
    sent(order, Date.now());
    return deliver(base, order);
  }));
  return refused.reduce((a, b) => a + b, 0);
}

function p99(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)];
}

/** The small tenant's receipt latencies (ms) for orders sent at `SMALL_RATE` while `alongside` runs. */
async function smallTenantLatencies(base: string, sink: SmtpSink, orgId: string, phase: string, alongside: Promise<unknown>): Promise<number[]> {
  const orders = smallOrders(orgId, phase, Math.max(1, Math.round(SECONDS * SMALL_RATE)));
  const sentAt = new Map<string, number>();
  await Promise.all([paced(base, orders, SMALL_RATE, (order, at) => sentAt.set(order.email, at)), alongside]);
  await until(() => orders.every((o) => sink.arrivedAt(o.email) !== undefined), `the small tenant's receipts (${phase})`, 10 * 60_000);
  return orders.map((o) => sink.arrivedAt(o.email)! - sentAt.get(o.email)!);
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const sink = await startSmtpSink();
  const service = await startService('all-in-one', sink.url);
  try {
    const big = await seedWebhookOrg(service, { platforms: ['storefront-a'] });
    const small = await seedWebhookOrg(service, { platforms: ['cart-e'] });
    process.stdout.write(`${SECONDS} s; big tenant ${BIG_RATE} orders/s, small tenant ${SMALL_RATE} orders/s; all-in-one, ${engineName()}\n`);

    const alone = await smallTenantLatencies(service.base, sink, small.orgId, 'alone', Promise.resolve());
    process.stdout.write(`small tenant alone                p99 ${p99(alone)} ms (${alone.length} receipts)\n`);

    const flood = signedOrders('storefront-a', big.orgId, 0, Math.round(SECONDS * BIG_RATE), { oneLine: true });
    const bigSending = paced(service.base, flood, BIG_RATE);
    const beside = await smallTenantLatencies(service.base, sink, small.orgId, 'flood', bigSending);
    const bigRefused = await bigSending;
    const ratio = p99(beside) / p99(alone);
    const [{ waiting }] = await service.orm.em.fork().execute<Array<{ waiting: string }>>(
      'select count(*) as waiting from workflow_dispatch where organisation_id = ? and dead_at is null', [big.orgId],
    );
    process.stdout.write(`small tenant beside the flood     p99 ${p99(beside)} ms (${beside.length} receipts; the big tenant's deliveries were refused ${bigRefused} times and had ${waiting} rows waiting at the end)\n`);
    process.stdout.write(`flood/alone ${ratio.toFixed(2)}× (target ≤ ${TARGET_RATIO}×: ${ratio <= TARGET_RATIO ? 'met' : 'MISSED'})\n`);
    process.stdout.write(`RESULT ${JSON.stringify({
      seconds: SECONDS, bigRate: BIG_RATE, smallRate: SMALL_RATE,
      alone: { p99Ms: p99(alone), receipts: alone.length },
      flood: { p99Ms: p99(beside), receipts: beside.length, bigWaitingAtEnd: Number(waiting), bigRefused },
      ratio: Number(ratio.toFixed(2)), target: TARGET_RATIO,
    })}\n`);
  } finally {
    await service.close();
    await sink.close();
  }
}

runBenchmark(main);
