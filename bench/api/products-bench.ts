/**
 * GET /api/products (100 products) and POST /api/purchases under autocannon, each beside a bare
 * Fastify route answering the same bytes, in the same run. The ratio bare/real says what the
 * service's own work (auth, queries; for purchases the validation and the transaction that records
 * the sale with its outbox row) costs on this machine.
 *
 *   npm run bench:build && node .bench-build/bench/api/products-bench.js
 *
 * BENCH_SECONDS (default 10) bounds each side of each comparison (run in alternating rounds).
 * BENCH_WORKER=off leaves out the worker, so a sale costs only what the API does for it (validation,
 * the record, its run's start from the outbox), not its fulfilment on the same cores; with
 * BENCH_DISPATCH=off too, the outbox keeps the starts (the front door alone, as the webhook ack
 * benchmark measures it with DISPATCH_LOOPS=0).
 */
import Fastify from 'fastify';
import formbody from '@fastify/formbody';
import { seedOrganisation, seedProduct } from '../../test/helpers/seed';
import { compare, describeComparison, describeFigures } from '../lib/load';
import { startBenchWorld } from '../lib/world';
import { runBenchmark } from '../lib/run';
import { saleForm } from '../lib/sale-form';

const PRODUCTS = 100;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);

async function main(): Promise<void> {
  const world = await startBenchWorld({
    worker: process.env.BENCH_WORKER !== 'off',
    env: process.env.BENCH_DISPATCH === 'off' ? { DISPATCH_LOOPS: '0' } : {},
  });
  const bare = Fastify({ logger: false });
  try {
    const { h } = world;
    const org = await seedOrganisation(h);
    const products = [];
    for (let i = 0; i < PRODUCTS; i += 1) {
      products.push(await seedProduct(h, org.orgId, { slug: `bench-${i}`, name: `Bench product ${i}`, skus: [`SKU-${i}-A`, `SKU-${i}-B`] }));
    }
    const base = await h.app.listen({ host: '127.0.0.1', port: 0 });
    const auth = { authorization: `Bearer ${org.apiKey}` };
    const formHeaders = { ...auth, 'content-type': 'application/x-www-form-urlencoded' };

    // The bare routes answer exactly what the real ones answered once.
    const listing = await fetch(`${base}/api/products`, { headers: auth });
    const listBody = await listing.text();
    if (listing.status !== 200 || JSON.parse(listBody).length !== PRODUCTS) throw new Error(`GET /api/products answered ${listing.status}`);
    const sale = await fetch(`${base}/api/purchases`, {
      method: 'POST', headers: formHeaders, body: saleForm(products[0].productId, 'first@example.com'),
    });
    const fragment = await sale.text();
    if (sale.status !== 201) throw new Error(`POST /api/purchases answered ${sale.status}: ${fragment}`);

    await bare.register(formbody);
    bare.get('/bare/products', async (_request, reply) => reply.type('application/json; charset=utf-8').send(listBody));
    bare.post('/bare/purchases', async (_request, reply) => reply.code(201).type('text/html; charset=utf-8').send(fragment));
    const bareBase = await bare.listen({ host: '127.0.0.1', port: 0 });

    process.stdout.write(`${PRODUCTS} products (${listBody.length} bytes of JSON); ${SECONDS} s per side, 10 connections\n`);
    const list = await compare(
      { title: 'bare GET (same JSON)', url: `${bareBase}/bare/products` },
      { title: 'GET /api/products', url: `${base}/api/products`, headers: auth },
      SECONDS,
    );
    // autocannon puts a fresh id in place of `[<id>]` in each request: a new customer per sale.
    const saleBody = saleForm(products[1].productId, 'buyer-ID@example.com').replace('buyer-ID', 'buyer-[<id>]');
    const purchase = await compare(
      { title: 'bare POST (form, same fragment)', url: `${bareBase}/bare/purchases`, method: 'POST', headers: formHeaders, body: saleBody },
      { title: 'POST /api/purchases', url: `${base}/api/purchases`, method: 'POST', headers: formHeaders, body: saleBody },
      SECONDS,
    );

    for (const figures of [list.bare, list.real, purchase.bare, purchase.real]) process.stdout.write(`${describeFigures(figures)}\n`);
    process.stdout.write(`${describeComparison('GET /api/products', list)}\n${describeComparison('POST /api/purchases', purchase)}\n`);
    process.stdout.write(`RESULT ${JSON.stringify({ products: PRODUCTS, seconds: SECONDS, list, purchase })}\n`);
    const failures = [list.real, purchase.real].filter((f) => f.non2xx > 0 || f.errors > 0);
    if (failures.length > 0) throw new Error(`non-2xx answers or errors under load: ${failures.map((f) => f.title).join(', ')}`);
  } finally {
    await bare.close();
    await world.close();
  }
}

runBenchmark(main);
