/**
 * Webhook acknowledgement: latency (p50, p99) and throughput of each platform endpoint at a fixed
 * rate, beside a bare Fastify route doing the same signature check (the same adapter's verify on
 * the same raw bytes) and answering the same shape, in the same run. Every real delivery is a
 * distinct, validly signed order, so each one is verified, parsed, resolved, recorded in
 * PostgreSQL and starts its fulfilment workflow(s) in Temporal before it is answered.
 *
 *   npm run bench:build && node .bench-build/bench/webhooks/ack-bench.js
 *
 * BENCH_RATE (default 300 req/s), BENCH_SECONDS (default 10) per run, BENCH_PLATFORMS (comma list,
 * default all six). Target: p99 ≤ 15 ms at 300 req/s. No worker runs, so fulfilment does not
 * compete with the front door for the CPU (in production they are separate processes); the load
 * generator is a child process, so it does not share the servers' event loop. First it measures
 * how many signalWithStart calls per second the Temporal server takes on its own: the ceiling of
 * the front door, which starts one per line to fulfil before it answers.
 */
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import Fastify, { type FastifyRequest } from 'fastify';
import { PLATFORMS, type Platform } from '../../src/domain/platforms';
import { buildApp } from '../../src/http/app';
import type { FulfilmentClient } from '../../src/temporal/client';
import type { WebhookRequest } from '../../src/webhooks/adapter';
import { adapters } from '../../src/webhooks/registry';
import { SECRETS, seedWebhookOrg } from '../../test/helpers/webhooks';
import { describeFigures, type LoadFigures } from '../lib/load';
import { startBenchWorld } from '../lib/world';
import { signedOrders } from './signed-orders';
import { exitOnFailure, runBenchmark } from '../lib/run';

const RATE = Number(process.env.BENCH_RATE ?? 300);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = 20;
const TARGET_P99_MS = 15;
const PLATFORM_LIST = (process.env.BENCH_PLATFORMS?.split(',') ?? [...PLATFORMS]) as Platform[];

interface ClientJob {
  title: string;
  baseUrl: string;
  platform: Platform;
  orgId: string;
  firstOrder: number;
}

/** Client mode (a child process): one fixed-rate autocannon run over distinct signed orders. */
async function runClient(job: ClientJob): Promise<LoadFigures> {
  const orders = signedOrders(job.platform, job.orgId, job.firstOrder, Math.ceil(RATE * SECONDS * 1.2) + CONNECTIONS);
  let next = 0;
  const result = await autocannon({
    url: job.baseUrl,
    connections: CONNECTIONS,
    overallRate: RATE,
    duration: SECONDS,
    requests: [{
      method: 'POST',
      setupRequest: (request) => {
        const order = orders[next % orders.length];
        next += 1;
        return { ...request, method: 'POST', path: order.path, headers: order.headers, body: order.body };
      },
    }],
  });
  return {
    title: job.title,
    requestsPerSecond: Math.round(result.requests.average),
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

function inChild(job: ClientJob): Promise<LoadFigures> {
  return new Promise((resolve, reject) => {
    const child = fork(__filename, ['client', JSON.stringify(job)], { stdio: 'inherit' });
    child.once('message', (figures) => resolve(figures as LoadFigures));
    child.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`load client exited with ${code}`))));
  });
}

/** The baseline: the same raw-body capture and signature check, nothing else. */
async function bareServer(): Promise<{ url: string; close(): Promise<void> }> {
  const bare = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
  bare.removeAllContentTypeParsers();
  bare.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  const handler = (platform: Platform) => async (request: FastifyRequest) => {
    const webhook: WebhookRequest = {
      rawBody: request.body as Buffer,
      headers: request.headers,
      query: request.query as Record<string, string>,
    };
    if (!adapters[platform].verify(webhook, SECRETS[platform], new Date())) throw Object.assign(new Error('bad signature'), { statusCode: 401 });
    return { received: true, deliveryIds: [randomUUID()] };
  };
  for (const platform of PLATFORMS) {
    if (platform !== 'payments-c') bare.post(`/webhooks/:orgId/${platform}`, handler(platform));
  }
  bare.post('/webhooks/payments-c', handler('payments-c'));
  const url = await bare.listen({ host: '127.0.0.1', port: 0 });
  return { url, close: () => bare.close() };
}

async function main(): Promise<void> {
  const world = await startBenchWorld({ worker: false });
  const bare = await bareServer();
  try {
    const { h } = world;
    const org = await seedWebhookOrg(h);
    const base = await h.app.listen({ host: '127.0.0.1', port: 0 });
    process.stdout.write(`${RATE} req/s for ${SECONDS} s per run, ${CONNECTIONS} connections, distinct signed orders; no worker\n`);

    // What the Temporal server alone allows: signalWithStart calls per second with as many in flight.
    const starts = Math.min(RATE * SECONDS, 3000);
    let nextStart = 0;
    const startedAt = process.hrtime.bigint();
    await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
      while (nextStart < starts) {
        const n = nextStart;
        nextStart += 1;
        await h.fulfilment.fulfilLine({
          orgId: org.orgId, source: 'cart-e', externalOrderId: `ceiling-${n}`, productId: org.ebook.productId,
          customer: { email: 'ceiling@example.com', name: '' }, amount: '1.00', currency: 'USD', paymentMethod: 'cart-e',
          test: true, sendReceipt: false, emailRetryWindowMs: 60_000,
        }, randomUUID());
      }
    }));
    const startsPerSecond = Math.round(starts / (Number(process.hrtime.bigint() - startedAt) / 1e9));
    process.stdout.write(`Temporal alone: ${startsPerSecond} signalWithStart/s (${starts} starts, ${CONNECTIONS} in flight); each delivery starts one per line to fulfil\n`);

    // Diagnostic: the same app with Temporal's calls answered at once, to tell the front door's own
    // cost (verify, parse, resolve, record in PostgreSQL) from the start of the workflows.
    const noTemporal = { fulfilLine: async () => 'stubbed', alert: async () => 'stubbed' } as unknown as FulfilmentClient;
    const stubbedApp = await buildApp({ config: h.config, orm: h.orm, fulfilment: noTemporal, storage: h.storage, clock: () => new Date() });
    const stubbedBase = await stubbedApp.listen({ host: '127.0.0.1', port: 0 });

    const results: Record<string, {
      bare: LoadFigures; real: LoadFigures; temporalStubbed: LoadFigures; p99Ratio: number; meetsTarget: boolean;
    }> = {};
    let firstOrder = 0;
    for (const platform of PLATFORM_LIST) {
      const job = { platform, orgId: org.orgId, firstOrder };
      firstOrder += 1_000_000;
      const bareFigures = await inChild({ ...job, title: `bare ${platform} (same HMAC)`, baseUrl: bare.url });
      const realFigures = await inChild({ ...job, title: `POST ${platform}`, baseUrl: base });
      const stubbedFigures = await inChild({ ...job, firstOrder: job.firstOrder + 500_000, title: `  (Temporal stubbed) ${platform}`, baseUrl: stubbedBase });
      process.stdout.write(`${describeFigures(bareFigures)}\n${describeFigures(realFigures)}\n${describeFigures(stubbedFigures)}\n`);
      results[platform] = {
        bare: bareFigures,
        real: realFigures,
        temporalStubbed: stubbedFigures,
        p99Ratio: Number((realFigures.latencyP99Ms / Math.max(bareFigures.latencyP99Ms, 1)).toFixed(2)),
        meetsTarget: realFigures.latencyP99Ms <= TARGET_P99_MS && realFigures.non2xx === 0 && realFigures.errors === 0,
      };
      process.stdout.write(`  ${platform}: p99 ${realFigures.latencyP99Ms} ms (target ≤ ${TARGET_P99_MS} ms: ${results[platform].meetsTarget ? 'met' : 'MISSED'}), `
        + `real/bare p99 ${results[platform].p99Ratio}×, ${realFigures.requestsPerSecond}/${bareFigures.requestsPerSecond} req/s\n`);
    }
    process.stdout.write(`RESULT ${JSON.stringify({ rate: RATE, seconds: SECONDS, connections: CONNECTIONS, targetP99Ms: TARGET_P99_MS, temporalStartsPerSecond: startsPerSecond, platforms: results })}\n`);
    const failed = Object.entries(results).filter(([, r]) => r.real.non2xx > 0 || r.real.errors > 0);
    if (failed.length > 0) throw new Error(`non-2xx answers or errors under load: ${failed.map(([p]) => p).join(', ')}`);
    await stubbedApp.close();
  } finally {
    await bare.close();
    await world.close();
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
