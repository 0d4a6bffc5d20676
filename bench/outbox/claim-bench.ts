/**
 * The outbox claim (src/outbox/outbox-store, claimDueRows) on a deep outbox against a shallow one,
 * in the same run on the same database: 500 waiting sales of one organisation beside 3 of another,
 * then the same with 20,000 waiting bulk rows (an integrator's events) and 1,500 more sales of the first. Each claim is
 * the dispatcher's (a lease), in a transaction rolled back, so every round claims from the same rows. Target:
 * the deep claim ≤ 1.5× the shallow one (a claim reads a few index entries per organisation, never
 * the whole outbox).
 *
 *   npm run bench:build && node .bench-build/bench/outbox/claim-bench.js
 *
 * BENCH_CLAIMS (default 300) claims per depth, after 100 unmeasured ones (each pool connection plans its own).
 */
import { randomUUID } from 'node:crypto';
import { createOrm, migrate, type Orm } from '../../src/db/orm';
import { claimDueRows, type EngineRunLimits } from '../../src/outbox/outbox-store';
import { CLAIM_LEASE_MS } from '../../src/temporal/dispatcher';
import { createTestDatabase, hostPostgresUrl } from '../../test/helpers/database';
import { runBenchmark } from '../lib/run';

const CLAIMS = Number(process.env.BENCH_CLAIMS ?? 300);
const WARM_UP = 100;
const TARGET_RATIO = 1.5;
const LIMITS: EngineRunLimits = { runsPerOrganisation: 20, engineRuns: 20, reservedRuns: 5, fairnessWindowMs: 10_000 };
const BATCH = 100;

/** `count` due rows of `kind` for the organisation, due one millisecond apart, the oldest `count` ms ago. */
async function addRows(orm: Orm, orgId: string, kind: string, count: number): Promise<void> {
  await orm.em.fork().execute(`insert into workflow_dispatch (id, organisation_id, kind, workflow_id, payload, created_at, due_at, attempts)
    select gen_random_uuid(), ?, ?, ? || g, '{}'::jsonb, now(), now() - g * interval '1 millisecond', 0 from generate_series(1, ?) g`,
  [orgId, kind, `${kind}-${orgId}-`, count]);
  await orm.em.fork().execute('analyze workflow_dispatch');
}

class RolledBack extends Error {}

/** Milliseconds per claim, and the kinds the last claim took. */
async function timeClaims(orm: Orm): Promise<{ ms: number; claimed: Record<string, number> }> {
  let claimed: Record<string, number> = {};
  const claim = () => orm.em.fork().transactional(async (tx) => {
    const { rows } = await claimDueRows(tx, BATCH, LIMITS, CLAIM_LEASE_MS);
    claimed = {};
    for (const row of rows) claimed[row.kind] = (claimed[row.kind] ?? 0) + 1;
    throw new RolledBack();
  }).catch((error: unknown) => {
    if (!(error instanceof RolledBack)) throw error;
  });
  for (let i = 0; i < WARM_UP; i += 1) await claim();
  const started = process.hrtime.bigint();
  for (let i = 0; i < CLAIMS; i += 1) await claim();
  return { ms: Number(process.hrtime.bigint() - started) / 1e6 / CLAIMS, claimed };
}

async function main(): Promise<void> {
  const database = await createTestDatabase(hostPostgresUrl());
  const orm = await createOrm(database.url);
  try {
    await migrate(orm);
    const [big, small] = [randomUUID(), randomUUID()];
    await addRows(orm, big, 'fulfil-line', 500);
    await addRows(orm, small, 'fulfil-line', 3);
    const shallow = await timeClaims(orm);
    process.stdout.write(`shallow (503 rows)    ${shallow.ms.toFixed(2)} ms per claim, took ${JSON.stringify(shallow.claimed)}\n`);

    await addRows(orm, big, 'deliver-event', 20_000);
    await addRows(orm, big, 'fulfil-line', 1_500);
    const deep = await timeClaims(orm);
    process.stdout.write(`deep (22,003 rows)    ${deep.ms.toFixed(2)} ms per claim, took ${JSON.stringify(deep.claimed)}\n`);

    const ratio = deep.ms / shallow.ms;
    process.stdout.write(`deep/shallow ${ratio.toFixed(2)}× (target ≤ ${TARGET_RATIO}×: ${ratio <= TARGET_RATIO ? 'met' : 'MISSED'})\n`);
    process.stdout.write(`RESULT ${JSON.stringify({
      claims: CLAIMS, shallowMs: Number(shallow.ms.toFixed(2)), deepMs: Number(deep.ms.toFixed(2)), ratio: Number(ratio.toFixed(2)), target: TARGET_RATIO,
    })}\n`);
  } finally {
    await orm.close();
    await database.drop();
  }
}

runBenchmark(main);
