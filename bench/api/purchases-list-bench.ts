/**
 * GET /api/purchases over 1,000,000 purchases, end to end over real HTTP (127.0.0.1), beside
 * `\copy (select ...) to stdout` of the same rows by psql, in the same run. The API runs in a child
 * process (purchases-list-server) so that its peak RSS is its own: streaming means it stays flat
 * whatever the number of purchases.
 *
 *   npm run bench:build && node .bench-build/bench/api/purchases-list-bench.js
 *
 * BENCH_PURCHASES (default 1000000) sets the row count; BENCH_RUNS (default 2) the timed runs of
 * each side (the best is kept). Needs `psql` on PATH.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createOrm, migrate, type Orm } from '../../src/db/orm';
import { Product, ProductVersion } from '../../src/db/entities';
import { OWASP_SCRYPT_COST, PasswordHasher } from '../../src/security/password-hashing';
import { createOrganisation } from '../../src/services/organisations';
import { insertPurchases } from '../../test/helpers/bulk-purchases';
import { createTestDatabase, hostPostgresUrl } from '../../test/helpers/database';
import { API_NODE_FLAGS } from '../../src/http/api-process';
import type { ServerMemory } from './purchases-list-server';
import { runBenchmark } from '../lib/run';

const PURCHASES = Number(process.env.BENCH_PURCHASES ?? 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 2);
const MB = 1024 * 1024;

interface Seeded {
  orgId: string;
  apiKey: string;
}

async function seed(orm: Orm): Promise<Seeded> {
  const em = orm.em.fork();
  const { orgId, apiKey } = await createOrganisation(em, new PasswordHasher(OWASP_SCRYPT_COST), {
    name: 'Bench org', ownerEmail: 'owner@bench.example', ownerPassword: 'correct horse battery',
  });
  const product = em.create(Product, { organisation: orgId, name: 'Bench product', slug: 'bench-product', status: 'published' });
  const version = em.create(ProductVersion, { product, version: '1.0.0' });
  product.activeVersion = version;
  await em.flush();
  await insertPurchases(em, {
    orgId, productId: product.id, versionId: version.id, count: PURCHASES, customers: Math.max(1, Math.floor(PURCHASES / 10)), tag: 'bench',
  });
  await em.execute('analyze customer');
  await em.execute('analyze purchase');
  return { orgId, apiKey };
}

/** The same rows, columns and order as the API's query, in one statement (no batches). */
function copySql(orgId: string): string {
  if (!/^[0-9a-f-]{36}$/.test(orgId)) throw new Error('unexpected organisation id');
  return `\\copy (select p.id, p.product_id, p.version_id, c.id, c.name, c.email, p.amount::text, p.currency,
    p.payment_method, p.source, p.external_order_id, p.test,
    to_char(p.receipt_sent_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    to_char(p.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
    from purchase p join customer c on c.id = p.customer_id where p.organisation_id = '${orgId}'
    order by p.created_at desc, p.id desc) to stdout`.replace(/\s+/g, ' ');
}

/** psql's \copy to stdout, its output thrown away by the OS (/dev/null): milliseconds. */
function timeCopy(databaseUrl: string, orgId: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const psql = spawn('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', databaseUrl, '-c', copySql(orgId)], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    psql.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    psql.on('error', reject);
    psql.on('close', (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`psql exited ${code}: ${stderr}`))));
  });
}

interface Listing {
  ms: number;
  bytes: number;
  rows: number;
  status: number;
}

/** One GET read to the end; rows counted on the fly (the body is never held). */
function timeList(base: string, apiKey: string, query = ''): Promise<Listing> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const marker = '"customer":{';
    http.get(`${base}/api/purchases${query}`, { headers: { authorization: `Bearer ${apiKey}` } }, (res) => {
      let bytes = 0;
      let rows = 0;
      let tail = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        bytes += Buffer.byteLength(chunk);
        const text = tail + chunk;
        let at = text.indexOf(marker);
        while (at !== -1) {
          rows += 1;
          at = text.indexOf(marker, at + marker.length);
        }
        tail = text.slice(-(marker.length - 1));
      });
      res.on('end', () => resolve({ ms: performance.now() - started, bytes, rows, status: res.statusCode ?? 0 }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

function request<T>(child: ChildProcess, message: string): Promise<T> {
  return new Promise((resolve) => {
    child.once('message', (reply) => resolve(reply as T));
    child.send(message);
  });
}

async function startServer(databaseUrl: string): Promise<{ child: ChildProcess; base: string }> {
  // Started with the API role's Node flags, as `start:api` starts it (V8's default young generation
  // put this machine's peak at 317 MB against 287 MB with them).
  const child = fork(path.join(__dirname, 'purchases-list-server.js'), [], {
    execArgv: [...API_NODE_FLAGS],
    env: { ...process.env, BENCH_DATABASE_URL: databaseUrl }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const base = await new Promise<string>((resolve, reject) => {
    child.once('message', (message) => resolve((message as { url: string }).url));
    child.once('exit', (code) => reject(new Error(`the API process exited (${code}) before listening`)));
  });
  return { child, base };
}

function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.send('stop');
  });
}

const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;

async function main(): Promise<void> {
  process.env.TEST_ADMIN_DATABASE_URL = hostPostgresUrl();
  const database = await createTestDatabase();
  const orm = await createOrm(database.url);
  let server: { child: ChildProcess; base: string } | undefined;
  try {
    await migrate(orm);
    const seedStarted = performance.now();
    const { orgId, apiKey } = await seed(orm);
    process.stdout.write(`${PURCHASES} purchases inserted in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s\n`);

    server = await startServer(database.url);
    const warm = await timeList(server.base, apiKey, '?limit=10');
    if (warm.status !== 200 || warm.rows !== 10) throw new Error(`warm-up answered ${warm.status} with ${warm.rows} rows`);
    await timeCopy(database.url, orgId); // warms PostgreSQL's cache for both sides
    const idle = await request<ServerMemory>(server.child, 'memory');

    const api: Listing[] = [];
    const copy: number[] = [];
    for (let run = 0; run < RUNS; run += 1) {
      const listing = await timeList(server.base, apiKey);
      if (listing.status !== 200 || listing.rows !== PURCHASES) throw new Error(`GET /api/purchases answered ${listing.status} with ${listing.rows} rows`);
      api.push(listing);
      copy.push(await timeCopy(database.url, orgId));
    }
    const after = await request<ServerMemory>(server.child, 'memory');

    const bestApi = Math.min(...api.map((l) => l.ms));
    const bestCopy = Math.min(...copy);
    const result = {
      purchases: PURCHASES,
      runs: RUNS,
      apiMs: Math.round(bestApi),
      copyMs: Math.round(bestCopy),
      ratio: Number((bestApi / bestCopy).toFixed(2)),
      apiBytes: api[0].bytes,
      apiRowsPerSecond: Math.round(PURCHASES / (bestApi / 1000)),
      serverRssIdleMb: Number((idle.rss / MB).toFixed(1)),
      serverPeakRssMb: Number((after.maxRss / MB).toFixed(1)),
      serverPeakRssBeforeListingMb: Number((idle.maxRss / MB).toFixed(1)),
    };
    process.stdout.write(`GET /api/purchases (${PURCHASES} rows, ${mb(result.apiBytes)} of JSON): ${api.map((l) => Math.round(l.ms)).join(' / ')} ms\n`);
    process.stdout.write(`psql \\copy of the same rows to /dev/null:          ${copy.map((ms) => Math.round(ms)).join(' / ')} ms\n`);
    process.stdout.write(`ratio API/COPY (best of ${RUNS}): ${result.ratio}×\n`);
    process.stdout.write(`API process RSS: idle ${mb(idle.rss)}, peak before listing ${mb(idle.maxRss)}, peak after ${mb(after.maxRss)}\n`);
    process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
  } finally {
    if (server) await stopServer(server.child);
    await orm.close(true);
    await database.drop();
  }
}

runBenchmark(main);
