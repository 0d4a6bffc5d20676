/**
 * Security review H1: one tenant's flood must delay only itself. Two organisations on one service
 * (`npm start`, or the roles apart with BENCH_SHAPE=roles): the big one sends BENCH_BIG_RATE (300)
 * orders/s, the small one BENCH_SMALL_RATE (5) orders/s, for BENCH_SECONDS (30) s; the small one's receipt latency (delivery sent → receipt in
 * the SMTP sink) at the 99th percentile, against the same run's baseline: the small one alone, the
 * big one idle, first.
 *
 *   npm run build && npm run bench:build && node .bench-build/bench/webhooks/tenant-fairness-bench.js
 *
 * Target: small tenant's p99 with the flood ≤ 2× its p99 alone.
 */
import { setMaxListeners } from 'node:events';
import { appendFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { signFor } from '../../test/fixtures/platforms';
import { contentTypeOf, orderBody, SECRETS, seedWebhookOrg, webhookPath, withEmail } from '../../test/helpers/webhooks';
import { sampleAcceptQueue } from '../lib/accept-queue';
import { measureProcessCpu } from '../lib/process-cpu';
import { sampleUntilStopped } from '../lib/sampler';
import { describeVitals, watchEventLoop } from '../lib/event-loop-vitals';
import { percentile } from '../lib/percentile';
import { until } from '../lib/pool';
import { runBenchmark } from '../lib/run';
import { runtimeName, startService, startSmtpSink, type RunningService, type ServiceShape, type SmtpSink } from '../lib/service';
import { signedOrders, type SignedOrder } from './signed-orders';

const { EventType } = temporal.api.enums.v1;
type EventType = temporal.api.enums.v1.EventType;

const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const SHAPE = (process.env.BENCH_SHAPE ?? 'all-in-one') as ServiceShape;
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

/** How a tenant's deliveries were turned back before being recorded, each retried as a platform would. */
interface Refusals {
  /** 503 with Retry-After 1: the front door's in-flight places were taken. */
  busy: number;
  /** 503 with a longer Retry-After: the organisation's outbox share was full. */
  backlog: number;
  /** The connection failed (refused, reset or dropped by the service). */
  dropped: number;
}

const noRefusals = (): Refusals => ({ busy: 0, backlog: 0, dropped: 0 });

/**
 * POSTs a delivery until it is recorded, as a platform retries a 503 or a connection the service
 * dropped; gives up once `until` aborts (the run is over: what the platform would send later is not
 * measured).
 */
async function deliver(base: string, order: SignedOrder, refusals: Refusals, until: AbortSignal, attempting: () => void): Promise<void> {
  while (!until.aborted) {
    let retryAfterSeconds = 1;
    attempting();
    try {
      const res = await fetch(`${base}${order.path}`, { method: 'POST', headers: order.headers, body: new Uint8Array(order.body) });
      await res.arrayBuffer();
      if (res.status === 200) return;
      if (res.status !== 503) throw new Error(`delivery answered ${res.status}`);
      retryAfterSeconds = Number(res.headers.get('retry-after') ?? 1);
      refusals[retryAfterSeconds > 1 ? 'backlog' : 'busy'] += 1;
    } catch (error) {
      if (!(error instanceof TypeError)) throw error;
      refusals.dropped += 1;
    }
    await sleep(1_000 * retryAfterSeconds, until);
  }
}

/** Waits `ms`, or less if `until` aborts first. */
async function sleep(ms: number, until: AbortSignal): Promise<void> {
  await setTimeout(ms, undefined, { signal: until }).catch(() => undefined);
}

/**
 * Sends `orders` at `perSecond`, each at its own moment (an open loop: a slow answer does not slow
 * the next send); returns how they were turned back and retried. `attempted` hears of each attempt
 * (the first is the order's send; later ones are retries after a refusal).
 */
async function paced<T extends SignedOrder>(
  base: string, orders: T[], perSecond: number, attempted: (order: T, at: number) => void = () => undefined, until = new AbortController().signal,
): Promise<Refusals> {
  const start = Date.now();
  const refusals = noRefusals();
  await Promise.all(orders.map(async (order, i) => {
    await setTimeout(Math.max(0, start + (i * 1_000) / perSecond - Date.now()));
    await deliver(base, order, refusals, until, () => attempted(order, Date.now()));
  }));
  return refusals;
}

const refusalsText = (r: Refusals) => `${r.busy} busy, ${r.backlog} backlog, ${r.dropped} dropped`;

const p99 = (values: number[]) => percentile(values, 0.99);

/** Where a small-tenant receipt's time went, each stage in ms, by what the service recorded of it. */
interface Stages {
  /** Sent → its last attempt sent: the waits of a platform retrying the service's refusals. */
  retries: number;
  /** Last attempt sent → its delivery recorded (`received_at`, read after the organisation's lookup): the front door. */
  frontDoor: number;
  /** Recorded → its fulfilment run started in the engine: the outbox and its dispatcher. */
  outbox: number;
  /** Run started → its first workflow task handed to a worker: the engine's task queue. */
  taskQueue: number;
  /** Task handed to the worker → its purchase recorded (a local activity of that task): the worker's slots and event loop. */
  worker: number;
  /** Purchase recorded → receipt accepted by the SMTP sink (`receipt_sent_at`). */
  receipt: number;
}

interface Phase {
  latencies: number[];
  stages: Stages[];
  refusals: Refusals;
}

/** The small tenant's receipt latencies (ms) for orders sent at `SMALL_RATE` for SECONDS, with their stages. */
async function smallTenantPhase(service: RunningService, engine: Client, sink: SmtpSink, orgId: string, phase: string): Promise<Phase> {
  const orders = smallOrders(orgId, phase, Math.max(1, Math.round(SECONDS * SMALL_RATE)));
  const sentAt = new Map<string, number>();
  const lastAttemptAt = new Map<string, number>();
  const refusals = await paced(service.base, orders, SMALL_RATE, (order, at) => {
    if (!sentAt.has(order.email)) sentAt.set(order.email, at);
    lastAttemptAt.set(order.email, at);
  });
  await until(() => orders.every((o) => sink.arrivedAt(o.email) !== undefined), `the small tenant's receipts (${phase})`, { maxWaitMs: 10 * 60_000 });
  const rows = await service.orm.em.fork().execute<Array<{ email: string; received_at: string; workflow_ids: string[]; recorded_at: string; receipt_sent_at: string }>>(
    `select c.email, d.received_at, d.workflow_ids, p.created_at as recorded_at, p.receipt_sent_at
       from webhook_delivery d
       join purchase p on p.organisation_id = d.organisation_id and p.external_order_id = d.external_order_id
       join customer c on c.id = p.customer_id
      where d.organisation_id = ? and d.external_order_id like ?`,
    [orgId, `small-${phase}-%`],
  );
  const stages = await Promise.all(rows.map(async (row): Promise<Stages> => {
    const { events } = await engine.workflow.getHandle(row.workflow_ids[0]).fetchHistory();
    const timeOf = (type: EventType) => {
      const at = events!.find((e) => e.eventType === type)!.eventTime!;
      return Number(at.seconds) * 1_000 + Math.round((at.nanos ?? 0) / 1e6);
    };
    const started = timeOf(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED);
    const taskStarted = timeOf(EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED);
    const [received, recorded, receiptSent] = [row.received_at, row.recorded_at, row.receipt_sent_at].map((at) => new Date(at).getTime());
    return {
      retries: lastAttemptAt.get(row.email)! - sentAt.get(row.email)!, frontDoor: received - lastAttemptAt.get(row.email)!, outbox: started - received, taskQueue: taskStarted - started, worker: recorded - taskStarted, receipt: receiptSent - recorded,
    };
  }));
  return { latencies: orders.map((o) => sink.arrivedAt(o.email)! - sentAt.get(o.email)!), stages, refusals };
}

/**
 * What the service's PostgreSQL sessions wait on, sampled every 250 ms until the returned function is
 * called: the wait events (or `idle in transaction`) seen most, in session-samples, and the longest
 * transaction seen open with its current statement.
 */
function sampleDatabaseWaits(service: RunningService): () => Promise<string> {
  const waits = new Map<string, number>();
  let longest = { ms: 0, query: '' };
  const em = service.orm.em.fork();
  const stop = sampleUntilStopped(async () => {
    const rows = await em.execute<Array<{ wait: string; ms: number; query: string }>>(
      `select case when state = 'active' then coalesce(wait_event_type || ':' || wait_event, 'on CPU') else state end as wait,
              extract(epoch from clock_timestamp() - coalesce(xact_start, query_start)) * 1000 as ms, left(query, 120) as query
         from pg_stat_activity where datname = current_database() and state <> 'idle' and pid <> pg_backend_pid()`,
    );
    for (const row of rows) {
      waits.set(row.wait, (waits.get(row.wait) ?? 0) + 1);
      if (Number(row.ms) > longest.ms) longest = { ms: Math.round(Number(row.ms)), query: row.query.replace(/\s+/g, ' ') };
    }
  });
  return async () => {
    await stop();
    const top = [...waits].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([wait, n]) => `${wait} ${n}`).join(', ');
    return `  PostgreSQL sessions seen: ${top}; longest transaction ${longest.ms} ms, at: ${longest.query}`;
  };
}

/**
 * BENCH_OUTBOX_TRACE=<file>: every 0.5 s over the flood, each tenant's outbox and engine places
 * appended to the file as one line (seconds since the flood began; per tenant: sales due + other rows
 * due, rows leased to a dispatcher, the age in ms of its oldest due sale, its runs in the engine and
 * the runs it started in the last 0.5 s). Shows whether a tenant's sales wait for a place, and why.
 */
function traceOutbox(service: RunningService, tenants: { big: string; small: string }): () => Promise<void> {
  const file = process.env.BENCH_OUTBOX_TRACE;
  if (!file) return async () => undefined;
  const em = service.orm.em.fork();
  const began = Date.now();
  return sampleUntilStopped(async () => {
    const rows = await em.execute<Array<{ org: string; due: string; other: string; leased: string; oldest_ms: string | null; runs: string; starts: string }>>(
      `select o.id as org,
         (select count(*) from workflow_dispatch w where w.organisation_id = o.id and w.dead_at is null and w.due_at <= now() and w.kind = 'fulfil-line') as due,
         (select count(*) from workflow_dispatch w where w.organisation_id = o.id and w.dead_at is null and w.due_at <= now() and w.kind <> 'fulfil-line') as other,
         (select count(*) from workflow_dispatch w where w.organisation_id = o.id and w.dead_at is null and w.due_at > now() + interval '20 s') as leased,
         (select round(extract(epoch from now() - min(w.due_at)) * 1000) from workflow_dispatch w
           where w.organisation_id = o.id and w.dead_at is null and w.due_at <= now() and w.kind = 'fulfil-line') as oldest_ms,
         (select count(*) from webhook_delivery_item wi join webhook_delivery wd on wd.id = wi.delivery_id
           where wd.organisation_id = o.id and wi.outcome is null and wi.run_started_at is not null) as runs,
         (select count(*) from webhook_delivery_item wi join webhook_delivery wd on wd.id = wi.delivery_id
           where wd.organisation_id = o.id and wi.run_started_at > now() - interval '500 ms') as starts
       from organisation o where o.id in (?, ?) order by o.id = ? desc`, [tenants.big, tenants.small, tenants.big]);
    const line = rows.map((r, n) => `${n === 0 ? 'big' : 'small'}: due ${r.due}+${r.other} leased ${r.leased} oldest ${r.oldest_ms ?? '-'} runs ${r.runs} starts ${r.starts}`);
    appendFileSync(file, `${((Date.now() - began) / 1_000).toFixed(1)} ${line.join(' | ')}\n`);
  }, 500);
}

function stageLine(stages: Stages[]): string {
  const names = ['retries', 'frontDoor', 'outbox', 'taskQueue', 'worker', 'receipt'] as const;
  return names.map((name) => {
    const values = stages.map((s) => s[name]);
    return `${name} p50 ${percentile(values, 0.5)} / p99 ${p99(values)} ms`;
  }).join('; ');
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const sink = await startSmtpSink();
  const service = await startService(SHAPE, sink.url);
  try {
    const big = await seedWebhookOrg(service, { platforms: ['storefront-a'] });
    const small = await seedWebhookOrg(service, { platforms: ['cart-e'] });
    process.stdout.write(`${SECONDS} s; big tenant ${BIG_RATE} orders/s, small tenant ${SMALL_RATE} orders/s; ${SHAPE}, ${runtimeName()}\n`);

    const connection = await Connection.connect({ address: service.temporal.address });
    const engine = new Client({ connection });
    const aloneCpu = measureProcessCpu();
    const alonePhase = await smallTenantPhase(service, engine, sink, small.orgId, 'alone');
    const alone = alonePhase.latencies;
    process.stdout.write(`small tenant alone                p99 ${p99(alone)} ms (${alone.length} receipts; turned back: ${refusalsText(alonePhase.refusals)})\n  ${stageLine(alonePhase.stages)}\n  ${aloneCpu()}\n`);

    const flood = signedOrders('storefront-a', big.orgId, 0, Math.round(SECONDS * BIG_RATE), { oneLine: true });
    // The big tenant sends for SECONDS, its platform retrying what is turned back until the small
    // tenant's last receipt is in; the rest of its backlog is not this benchmark's concern.
    const floodOver = new AbortController();
    setMaxListeners(Infinity, floodOver.signal); // one per delivery waiting to retry
    const vitals = await watchEventLoop(service.base);
    // The load generator's own loop: a send it cannot make on time shows as front-door time.
    const generatorLoop = monitorEventLoopDelay({ resolution: 10 });
    generatorLoop.enable();
    const databaseWaits = sampleDatabaseWaits(service);
    const acceptQueue = sampleAcceptQueue(Number(new URL(service.base).port));
    const floodCpu = measureProcessCpu();
    const stopTrace = traceOutbox(service, { big: big.orgId, small: small.orgId });
    const bigSending = paced(service.base, flood, BIG_RATE, undefined, floodOver.signal);
    const floodPhase = await smallTenantPhase(service, engine, sink, small.orgId, 'flood');
    await stopTrace();
    const floodVitals = await vitals();
    const floodCores = floodCpu();
    generatorLoop.disable();
    const waitsSeen = await databaseWaits();
    const longestAcceptQueue = await acceptQueue();
    floodOver.abort();
    const beside = floodPhase.latencies;
    await connection.close();
    const bigRefused = await bigSending;
    const ratio = p99(beside) / p99(alone);
    const [{ waiting }] = await service.orm.em.fork().execute<Array<{ waiting: string }>>(
      'select count(*) as waiting from workflow_dispatch where organisation_id = ? and dead_at is null', [big.orgId],
    );
    process.stdout.write(`small tenant beside the flood     p99 ${p99(beside)} ms (${beside.length} receipts; turned back: ${refusalsText(floodPhase.refusals)})\n  ${stageLine(floodPhase.stages)}\n`);
    process.stdout.write(`${describeVitals(floodVitals)} (the service's process, over the flood)\n`
      + `  load generator's event-loop delay p50 ${Math.round(generatorLoop.percentile(50) / 1e6)} ms, p99 ${Math.round(generatorLoop.percentile(99) / 1e6)} ms, max ${Math.round(generatorLoop.max / 1e6)} ms\n`
      + `  the API's accept queue (connections open at the client, not yet accepted): at most ${longestAcceptQueue}\n${waitsSeen}\n  ${floodCores}\n`);
    process.stdout.write(`big tenant: turned back ${refusalsText(bigRefused)}; ${waiting} starts waiting at the end\n`);
    process.stdout.write(`flood/alone ${ratio.toFixed(2)}× (target ≤ ${TARGET_RATIO}×: ${ratio <= TARGET_RATIO ? 'met' : 'MISSED'})\n`);
    process.stdout.write(`RESULT ${JSON.stringify({
      seconds: SECONDS, bigRate: BIG_RATE, smallRate: SMALL_RATE,
      alone: { p99Ms: p99(alone), receipts: alone.length },
      flood: { p99Ms: p99(beside), receipts: beside.length, smallRefused: floodPhase.refusals, bigWaitingAtEnd: Number(waiting), bigRefused },
      ratio: Number(ratio.toFixed(2)), target: TARGET_RATIO,
    })}\n`);
  } finally {
    await service.close();
    await sink.close();
  }
}

runBenchmark(main);
