/**
 * POST /licenses/validate under autocannon, beside a bare Fastify route that does one indexed
 * PostgreSQL read of the same key (pg's pool, as large as the service's), in the same run. Target:
 * at least 0.5× the bare route's requests per second. The service's side includes everything a
 * call costs: the per-address and per-key counters (in PostgreSQL), the body's validation, the
 * key's read with its seats.
 *
 *   npm run build && npm run bench:build && node .bench-build/bench/licenses/validate.js
 *
 * The limits (60 a minute per client address, 30 per key) stay as they are: the calls are spread
 * over BENCH_KEYS keys (default 5000) and as many client addresses, which the service reads from
 * X-Forwarded-For because this run trusts its loopback proxy (TRUST_PROXY=loopback), as a
 * deployment behind a proxy does. A 429 under load fails the run. BENCH_SECONDS (default 10)
 * bounds each side (in alternating rounds).
 */
import type autocannon from 'autocannon';
import Fastify from 'fastify';
import { Pool } from 'pg';
import { compare, describeComparison, describeFigures } from '../lib/load';
import { runBenchmark } from '../lib/run';
import { startBenchWorld } from '../lib/world';
import { insertPurchases } from '../../test/helpers/bulk-purchases';
import { seedOrganisation, seedProduct } from '../../test/helpers/seed';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const KEYS = Number(process.env.BENCH_KEYS ?? 5000);
/** The service's pool (src/db/orm.ts). */
const POOL_SIZE = 20;

const keyOf = (n: number) => `BENCH-${String(n).padStart(6, '0')}`;
const addressOf = (n: number) => `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;

async function main(): Promise<void> {
  const world = await startBenchWorld({ worker: false, env: { TRUST_PROXY: 'loopback' } });
  const bare = Fastify({ logger: false });
  let pool: Pool | undefined;
  try {
    const { h } = world;
    const org = await seedOrganisation(h);
    const { productId, versionId } = await seedProduct(h, org.orgId, { name: 'Bench app' });
    const em = h.orm.em.fork();
    await em.execute(`update product set license_source = 'generated', license_activation_limit = 5 where id = ?`, [productId]);
    await insertPurchases(em, { orgId: org.orgId, productId, versionId, count: KEYS, customers: Math.max(1, KEYS / 10), tag: 'licenses' });
    await em.execute(
      `insert into license_key (id, organisation_id, product_id, key, purchase_id, issued_at, created_at)
       select gen_random_uuid(), p.organisation_id, p.product_id, 'BENCH-' || lpad((row_number() over (order by p.created_at, p.id) - 1)::text, 6, '0'),
         p.id, now(), now()
       from purchase p where p.product_id = ?`,
      [productId],
    );
    await em.execute('analyze license_key');
    await em.execute('analyze purchase');

    const base = await h.app.listen({ host: '127.0.0.1', port: 0 });
    const first = await fetch(`${base}/licenses/validate`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key: keyOf(0) }),
    });
    const answer = await first.text();
    if (first.status !== 200 || !JSON.parse(answer).valid) throw new Error(`POST /licenses/validate answered ${first.status}: ${answer}`);

    if (!h.config.databaseUrl) throw new Error('the bench world has no DATABASE_URL');
    pool = new Pool({ connectionString: h.config.databaseUrl, max: POOL_SIZE });
    const bareRead = pool;
    bare.post('/bare/validate', async (request, reply) => {
      const { key } = request.body as { key: string };
      const { rows } = await bareRead.query({ name: 'bare-validate', text: 'select id, product_id, purchase_id from license_key where key = $1', values: [key] });
      if (rows.length === 0) return reply.code(404).send({ valid: false, error: 'license key not found' });
      return reply.type('application/json; charset=utf-8').send(answer);
    });
    const bareBase = await bare.listen({ host: '127.0.0.1', port: 0 });

    // Each request names the next key, from the next client address: no key or address comes near its limit.
    let next = 0;
    const spread = (request: autocannon.Request): autocannon.Request => {
      const n = next % KEYS;
      next += 1;
      return { ...request, body: JSON.stringify({ key: keyOf(n) }), headers: { ...request.headers, 'x-forwarded-for': addressOf(n) } };
    };
    const headers = { 'content-type': 'application/json' };
    process.stdout.write(`${KEYS} keys and client addresses; ${SECONDS} s per side, 10 connections\n`);
    const validate = await compare(
      { title: 'bare POST (one indexed read)', url: `${bareBase}/bare/validate`, method: 'POST', headers, setupRequest: spread },
      { title: 'POST /licenses/validate', url: `${base}/licenses/validate`, method: 'POST', headers, setupRequest: spread },
      SECONDS,
    );
    const throughput = Number((validate.real.requestsPerSecond / Math.max(validate.bare.requestsPerSecond, 1)).toFixed(2));
    for (const figures of [validate.bare, validate.real]) process.stdout.write(`${describeFigures(figures)}\n`);
    process.stdout.write(`${describeComparison('POST /licenses/validate', validate)}\n`);
    process.stdout.write(`real/bare throughput ${throughput}× (target ≥ 0.5×)\n`);
    process.stdout.write(`RESULT ${JSON.stringify({ keys: KEYS, seconds: SECONDS, validate, realOverBare: throughput, target: 0.5 })}\n`);
    if (validate.real.non2xx > 0 || validate.real.errors > 0) {
      throw new Error(`POST /licenses/validate under load: ${validate.real.non2xx} non-2xx answers, ${validate.real.errors} errors`);
    }
  } finally {
    await bare.close();
    await pool?.end();
    await world.close();
  }
}

runBenchmark(main);
