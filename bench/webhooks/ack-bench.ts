/**
 * Launch-day acknowledgements (issue "launch-day load"): distinct storefront-a orders (one product
 * each), signed as the platform signs them, against the service as users run it (`npm start`, and
 * the roles apart), beside a bare `node:http` server doing the same HMAC check on the same bytes, in
 * the same run. Two measurements per shape:
 *
 * - a steady BENCH_RATE (300) webhooks/s for BENCH_SECONDS (30): p50, p99, non-200 answers; the bare
 *   server's p99 at the same rate is this machine's floor at that moment;
 * - the most acknowledgements a second with 32 in flight, for BENCH_MAX_SECONDS (10), beside the bare
 *   server and beside a second baseline that makes each answer durable as the service's are: the same
 *   HMAC check, then one `INSERT … RETURNING` through `pg` (a pool of 20, the service's size) into the
 *   service's own database, so with its `synchronous_commit` (target ≥ 0.5× of that one);
 * - for the front door alone, also the most sales a second through `POST /api/purchases` with 32 in
 *   flight, by the same client against the same process (issue 29 part 3: ≥ 0.5× its acks/s).
 *
 * Each server gets 3 s of the steady rate first, not counted (JIT, pools, prepared statements).
 * Fulfilment runs meanwhile (the worker sends every receipt to an SMTP sink), as on launch day;
 * between measurements the backlog is left to drain and its drain time is printed. Peak resident
 * memory of each role's process is sampled throughout.
 *
 *   npm run build && npm run bench:build && node .bench-build/bench/webhooks/ack-bench.js
 *
 * BENCH_SHAPES (default `all-in-one,roles,front-door`; see bench/lib/service). Targets: 0 refused; p99 ≤ 250 ms and ≤ 3×
 * the bare server's p99, with the API process's event-loop delay and GC pauses over the steady run printed beside it;
 * most acks/s ≥ 0.5× the bare server's; RSS ≤ 250 MB per role. Where fulfilment runs, 32 in flight fill the
 * organisation's backlog cap (DISPATCH_ORGANISATION_BACKLOG) within seconds, after which its deliveries
 * are deferred (503) as they should be: the acks/s until its first 503 are printed beside the run's.
 */
import { fork } from 'node:child_process';
import http from 'node:http';
import autocannon from 'autocannon';
import { Pool } from 'pg';
import { SERVICE_POOL } from '../../src/db/orm';
import { adapters } from '../../src/webhooks/registry';
import { SECRETS, seedWebhookOrg } from '../../test/helpers/webhooks';
import { describeVitals, watchEventLoop } from '../lib/event-loop-vitals';
import { describeFigures, type LoadFigures } from '../lib/load';
import { percentile } from '../lib/percentile';
import { measureProcessCpu } from '../lib/process-cpu';
import { exitOnFailure, runBenchmark } from '../lib/run';
import { saleForm } from '../lib/sale-form';
import { startService, startSmtpSink, type RunningService, type ServiceShape } from '../lib/service';
import { signedOrders, type SignedOrder } from './signed-orders';

const RATE = Number(process.env.BENCH_RATE ?? 300);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const MAX_SECONDS = Number(process.env.BENCH_MAX_SECONDS ?? 10);
const MAX_IN_FLIGHT = 32;
const WARM_UP_SECONDS = 3;
/** Most sockets the steady load may open: enough that a slow answer does not hold back the next request. */
const FIXED_RATE_CONNECTIONS = 100;
const SHAPES = (process.env.BENCH_SHAPES ?? 'all-in-one,roles,front-door').split(',') as ServiceShape[];
const TARGETS = { p99Ratio: 3, p99Ms: 250, throughputRatio: 0.5, rssMb: 250, saleRatio: 0.5 };
const DRAIN_LIMIT_MS = 15 * 60_000;

interface ClientJob {
  title: string;
  baseUrl: string;
  orgId: string;
  firstOrder: number;
  seconds: number;
  connections: number;
  /** Requests per second, evenly spaced (open loop); absent: as fast as answers come. */
  rate?: number;
  /**
   * Instead of deliveries, sales through `POST /api/purchases` (a new customer each, no receipt),
   * as the organisation's API key: issue 29 part 3 compares them with the front door's acks.
   */
  sales?: { apiKey: string; productId: string };
}

/**
 * `deferred`: answers 503 with Retry-After (the organisation's outbox backlog cap, or the process's
 * in-flight cap), which a platform retries, so nothing is lost; `refused`: any other failure.
 */
type Figures = LoadFigures & {
  refused: number;
  deferred: number;
  acceptedP99Ms?: number;
  /**
   * Acknowledgements a second until the first 503 (the organisation's backlog cap engaged), and when
   * that was: what the front door took while the cap did not yet bind. Absent with no 503.
   */
  beforeCap?: { acksPerSecond: number; seconds: number };
  /** The load client's own CPU per request, in ms (its process ends before the run's CPU is read). */
  clientCpuMsPerRequest?: number;
};

const clientCpuText = (f: Figures) => (f.clientCpuMsPerRequest === undefined ? '' : `; the load client ${f.clientCpuMsPerRequest.toFixed(1)}`);

/**
 * A steady rate, as a platform's deliveries arrive: request i is sent at start + i/rate whatever
 * happened to the others (open loop, like wrk2), and its latency counts from that moment, so a
 * stall is not hidden by requests that were never sent. (autocannon's overallRate gives each of
 * its connections a share of the rate and fires them together, so its "steady" load arrives in
 * bursts as large as the connection count.)
 */
async function steadyLoad(job: ClientJob & { rate: number }, orders: SignedOrder[]): Promise<Figures> {
  const url = new URL(job.baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: job.connections });
  const total = Math.round(job.rate * job.seconds);
  const latencies: number[] = [];
  const acceptedLatencies: number[] = [];
  let failed = 0;
  let deferred = 0;
  const started = performance.now();
  await new Promise<void>((resolve) => {
    let sent = 0;
    let answered = 0;
    const fire = (i: number) => {
      const order = orders[i];
      const due = started + (i * 1000) / job.rate;
      const request = http.request({
        host: url.hostname, port: url.port, method: 'POST', path: order.path, agent,
        headers: { ...order.headers, 'content-length': String(order.body.length) },
      }, (response) => {
        response.resume();
        response.on('end', () => {
          const latency = performance.now() - due;
          latencies.push(latency);
          if (response.statusCode === 200) acceptedLatencies.push(latency);
          else if (response.statusCode === 503 && response.headers['retry-after'] !== undefined) deferred += 1;
          else failed += 1;
          if (++answered === total) resolve();
        });
      });
      request.on('error', () => {
        failed += 1;
        if (++answered === total) resolve();
      });
      request.end(order.body);
    };
    const tick = () => {
      const dueCount = Math.min(total, Math.floor(((performance.now() - started) * job.rate) / 1000) + 1);
      while (sent < dueCount) fire(sent++);
      if (sent < total) setTimeout(tick, 1);
    };
    tick();
  });
  agent.destroy();
  const at = (values: number[], q: number) => Math.round(percentile(values, q));
  return {
    title: job.title,
    requestsPerSecond: Math.round(total / ((performance.now() - started) / 1000)),
    latencyP50Ms: at(latencies, 0.5),
    latencyP99Ms: at(latencies, 0.99),
    requests: total,
    non2xx: failed + deferred,
    errors: 0,
    refused: failed,
    deferred,
    acceptedP99Ms: at(acceptedLatencies, 0.99),
  };
}

/** Sales of one product through the API, each to a new customer numbered from `first`. */
function saleRequests(sales: NonNullable<ClientJob['sales']>, first: number, count: number): SignedOrder[] {
  const headers = { authorization: `Bearer ${sales.apiKey}`, 'content-type': 'application/x-www-form-urlencoded' };
  return Array.from({ length: count }, (_, n) => ({
    path: '/api/purchases', headers, body: Buffer.from(saleForm(sales.productId, `buyer-${first + n}@example.com`)),
  }));
}

/** Client mode (a child process, off the servers' CPU budget as far as 2 cores allow): one run. */
async function runClient(job: ClientJob): Promise<Figures> {
  const count = Math.ceil((job.rate ?? 3000) * job.seconds * 1.2) + job.connections;
  const orders = job.sales
    ? saleRequests(job.sales, job.firstOrder, count)
    : signedOrders('storefront-a', job.orgId, job.firstOrder, count, { oneLine: true });
  if (job.rate !== undefined) return steadyLoad({ ...job, rate: job.rate }, orders);
  const cpuBefore = process.cpuUsage();
  let next = 0;
  const started = performance.now();
  let capAt: number | undefined;
  let acksBeforeCap = 0;
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const run = autocannon({
      url: job.baseUrl,
      connections: job.connections,
      duration: job.seconds,
      requests: [{
        method: 'POST',
        setupRequest: (request) => {
          const order = orders[next % orders.length];
          next += 1;
          return { ...request, method: 'POST', path: order.path, headers: order.headers, body: order.body };
        },
      }],
    }, (error, finished) => (error ? reject(error) : resolve(finished)));
    run.on('response', (_client, statusCode) => {
      if (capAt !== undefined) return;
      if (statusCode === 503) capAt = performance.now();
      else if (statusCode < 300) acksBeforeCap += 1;
    });
  });
  // The service's 503s all carry Retry-After (its caps); autocannon keeps counts, not headers.
  const deferred = result.statusCodeStats?.['503']?.count ?? 0;
  const cpu = process.cpuUsage(cpuBefore);
  return {
    clientCpuMsPerRequest: (cpu.user + cpu.system) / 1000 / Math.max(result.requests.total, 1),
    title: job.title,
    // Acknowledgements only: a 503 (the organisation's backlog cap) is not one.
    requestsPerSecond: Math.round(result['2xx'] / job.seconds),
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    refused: result.non2xx - deferred + result.errors + result.timeouts,
    deferred,
    beforeCap: capAt === undefined ? undefined : {
      acksPerSecond: Math.round(acksBeforeCap / ((capAt - started) / 1000)),
      seconds: Number(((capAt - started) / 1000).toFixed(1)),
    },
  };
}

function inChild(job: ClientJob): Promise<Figures> {
  return new Promise((resolve, reject) => {
    const child = fork(__filename, ['client', JSON.stringify(job)], { stdio: 'inherit' });
    child.once('message', (figures) => resolve(figures as Figures));
    child.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`load client exited with ${code}`))));
  });
}

/**
 * A baseline: node:http reading the body and checking storefront-a's HMAC with the same adapter;
 * with `record`, each verified delivery is also written before the answer (its id in the answer).
 */
async function bareServer(record?: (rawBody: Buffer) => Promise<string>): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      if (adapters['storefront-a'].verify({ rawBody, headers: request.headers, query: {} }, SECRETS['storefront-a'], new Date()) !== 'verified') {
        response.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid or missing signature"}');
        return;
      }
      const answer = (ids: string) => response.writeHead(200, { 'content-type': 'application/json' }).end(`{"received":true,"deliveryIds":[${ids}]}`);
      if (!record) answer('');
      else record(rawBody).then((id) => answer(`"${id}"`), () => response.writeHead(503).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** The floor of a durable acknowledgement: the bare server, committing each delivery (through a pool of the service's size). */
async function bareInsertServer(databaseUrl: string): Promise<{ url: string; close(): Promise<void> }> {
  const pool = new Pool({ connectionString: databaseUrl, max: SERVICE_POOL.max });
  await pool.query('create table if not exists bench_ack (id bigserial primary key, body bytea not null, received_at timestamptz not null default now())');
  const server = await bareServer(async (rawBody) => (await pool.query<{ id: string }>('insert into bench_ack (body) values ($1) returning id', [rawBody])).rows[0].id);
  return {
    url: server.url,
    close: async () => {
      await server.close();
      await pool.end();
    },
  };
}

/**
 * Waits until every recorded entry is final and the outbox is empty; returns the seconds it took
 * (the front door alone fulfils nothing: its backlog is left as it is).
 */
async function drain(service: RunningService, shape: ServiceShape, orgId: string): Promise<number> {
  if (shape === 'front-door') return 0;
  const started = Date.now();
  const em = service.orm.em.fork();
  for (;;) {
    const [row] = await em.execute<Array<{ pending: string; waiting: string }>>(
      `select (select count(*) from webhook_delivery where organisation_id = ? and status = 'Pending') as pending,
              (select count(*) from workflow_dispatch) as waiting`,
      [orgId],
    );
    if (Number(row.pending) === 0 && Number(row.waiting) === 0) return (Date.now() - started) / 1000;
    if (Date.now() - started > DRAIN_LIMIT_MS) throw new Error(`backlog not drained: ${JSON.stringify(row)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function main(): Promise<void> {
  const sink = await startSmtpSink();
  const bare = await bareServer();
  const results: Record<string, unknown> = {};
  let firstOrder = 0;
  const nextOrders = () => {
    firstOrder += 1_000_000;
    return firstOrder;
  };
  try {
    for (const shape of SHAPES) {
      const service = await startService(shape, sink.url);
      const durable = await bareInsertServer(service.orm.config.getClientUrl());
      try {
        const org = await seedWebhookOrg(service, { platforms: ['storefront-a'] });
        process.stdout.write(`\n${shape}: ${RATE}/s for ${SECONDS} s, then ${MAX_IN_FLIGHT} in flight for ${MAX_SECONDS} s\n`);
        const fixed = { orgId: org.orgId, seconds: SECONDS, connections: FIXED_RATE_CONNECTIONS, rate: RATE };
        // Warm-up, not counted: JIT, connection pools and prepared statements of both servers.
        for (const baseUrl of [bare.url, durable.url, service.base]) {
          await inChild({ ...fixed, seconds: WARM_UP_SECONDS, title: 'warm-up', baseUrl, firstOrder: nextOrders() });
        }
        // Issue 29 part 3: sales through the API against the front door alone, the same process and client.
        const sales = shape === 'front-door' ? { apiKey: org.apiKey, productId: org.ebook.productId } : undefined;
        if (sales) await inChild({ ...fixed, seconds: WARM_UP_SECONDS, title: 'warm-up', baseUrl: service.base, firstOrder: nextOrders(), sales });
        const bareFixed = await inChild({ ...fixed, title: `bare node:http at ${RATE}/s`, baseUrl: bare.url, firstOrder: nextOrders() });
        const endWatch = await watchEventLoop(service.base);
        const realFixed = await inChild({ ...fixed, title: `${shape} at ${RATE}/s`, baseUrl: service.base, firstOrder: nextOrders() });
        const vitals = await endWatch();
        process.stdout.write(`${describeFigures(bareFixed)}\n${describeFigures(realFixed)}\n${describeVitals(vitals)}\n`);
        const fixedDrain = await drain(service, shape, org.orgId);
        process.stdout.write(`  backlog drained ${fixedDrain.toFixed(1)} s after the run; ${sink.received()} emails in the sink so far\n`);

        const most = { orgId: org.orgId, seconds: MAX_SECONDS, connections: MAX_IN_FLIGHT };
        const bareMax = await inChild({ ...most, title: `bare node:http, ${MAX_IN_FLIGHT} in flight`, baseUrl: bare.url, firstOrder: nextOrders() });
        const durableMax = await inChild({ ...most, title: `bare + INSERT, ${MAX_IN_FLIGHT} in flight`, baseUrl: durable.url, firstOrder: nextOrders() });
        const ackCpu = measureProcessCpu();
        const realMax = await inChild({ ...most, title: `${shape}, ${MAX_IN_FLIGHT} in flight`, baseUrl: service.base, firstOrder: nextOrders() });
        const ackCpuText = ackCpu({ count: realMax.requests, unit: 'request' });
        process.stdout.write(`${describeFigures(bareMax)}\n${describeFigures(durableMax)}\n${describeFigures(realMax)}\n  ${ackCpuText}${clientCpuText(realMax)}\n`);
        let mostSales: { service: Figures; ratioToAcks: number } | undefined;
        if (sales) {
          const saleCpu = measureProcessCpu();
          const saleMax = await inChild({ ...most, title: `POST /api/purchases, ${MAX_IN_FLIGHT} in flight`, baseUrl: service.base, firstOrder: nextOrders(), sales });
          const ratioToAcks = Number((saleMax.requestsPerSecond / Math.max(realMax.requestsPerSecond, 1)).toFixed(2));
          mostSales = { service: saleMax, ratioToAcks };
          process.stdout.write(`${describeFigures(saleMax)}\n  ${saleCpu({ count: saleMax.requests, unit: 'request' })}${clientCpuText(saleMax)}\n`
            + `  sales through the API ${saleMax.requestsPerSecond}/s = ${ratioToAcks.toFixed(2)}× the front door's acks/s `
            + `(target ≥ ${TARGETS.saleRatio}×: ${ratioToAcks >= TARGETS.saleRatio ? 'met' : 'MISSED'})\n`);
        }
        const maxDrain = await drain(service, shape, org.orgId);
        const rss = service.peakRssMb();

        const p99Ratio = realFixed.latencyP99Ms / Math.max(bareFixed.latencyP99Ms, 1);
        const throughputRatio = realMax.requestsPerSecond / Math.max(bareMax.requestsPerSecond, 1);
        const durableRatio = realMax.requestsPerSecond / Math.max(durableMax.requestsPerSecond, 1);
        const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
        process.stdout.write(`  backlog drained ${maxDrain.toFixed(1)} s after the run; peak RSS ${JSON.stringify(rss)} MB\n`);
        process.stdout.write(`  refused at ${RATE}/s: ${realFixed.refused} (target 0: ${verdict(realFixed.refused === 0)}), `
          + `deferred (503 with Retry-After, retried by the platform): ${realFixed.deferred}; `
          + `p99 of the acknowledgements ${realFixed.acceptedP99Ms} ms (target ≤ ${TARGETS.p99Ms} ms: ${verdict((realFixed.acceptedP99Ms ?? Infinity) <= TARGETS.p99Ms)}); `
          + `p99 of all answers ${realFixed.latencyP99Ms} ms `
          + `= ${p99Ratio.toFixed(2)}× bare (target ≤ ${TARGETS.p99Ratio}×: ${verdict(p99Ratio <= TARGETS.p99Ratio)}); `
          + `most acks/s ${realMax.requestsPerSecond} = ${throughputRatio.toFixed(2)}× bare (target ≥ ${TARGETS.throughputRatio}×: ${verdict(throughputRatio >= TARGETS.throughputRatio)}), `
          + `${durableRatio.toFixed(2)}× bare + INSERT (target ≥ ${TARGETS.throughputRatio}×: ${verdict(durableRatio >= TARGETS.throughputRatio)}); `
          + (realMax.beforeCap === undefined ? '' : `until the organisation's backlog cap answered its first 503 (after ${realMax.beforeCap.seconds} s): `
            + `${realMax.beforeCap.acksPerSecond} acks/s = ${(realMax.beforeCap.acksPerSecond / Math.max(durableMax.requestsPerSecond, 1)).toFixed(2)}× bare + INSERT; `)
          + `RSS (target ≤ ${TARGETS.rssMb} MB per role: ${verdict(Object.values(rss).every((mb) => mb <= TARGETS.rssMb))})\n`);
        results[shape] = {
          fixedRate: { bare: bareFixed, service: realFixed, p99Ratio: Number(p99Ratio.toFixed(2)), apiVitals: vitals, drainSeconds: Number(fixedDrain.toFixed(1)) },
          mostAcks: {
            bare: bareMax, bareInsert: durableMax, service: realMax, ratio: Number(throughputRatio.toFixed(2)),
            insertRatio: Number(durableRatio.toFixed(2)), drainSeconds: Number(maxDrain.toFixed(1)),
          },
          ...(mostSales ? { mostSales } : {}),
          peakRssMb: rss,
        };
      } finally {
        await durable.close();
        await service.close();
      }
    }
    process.stdout.write(`RESULT ${JSON.stringify({ rate: RATE, seconds: SECONDS, maxSeconds: MAX_SECONDS, targets: TARGETS, shapes: results })}\n`);
  } finally {
    await bare.close();
    await sink.close();
  }
}

if (process.argv[2] === 'client') {
  runClient(JSON.parse(process.argv[3]) as ClientJob).then(
    (figures) => process.send!(figures, () => process.exit(0)),
    exitOnFailure,
  );
} else {
  runBenchmark(main);
}
