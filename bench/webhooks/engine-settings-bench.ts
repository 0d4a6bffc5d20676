/**
 * The Temporal dev server's throughput settings, measured one by one: the no-op baseline (one
 * activity, the service's search attributes) on a fresh dev server with the CLI's defaults, with
 * each setting alone, and with the set `npm start` uses. Ratios are against the defaults, each
 * variant run BENCH_ROUNDS (2) times in alternating order, median kept.
 *
 *   npm run bench:build && node .bench-build/bench/webhooks/engine-settings-bench.js
 *
 * BENCH_RUNS (default 1500 workflow runs per measurement), BENCH_IN_FLIGHT (default 32).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { DEV_SERVER_THROUGHPUT_ARGS } from '../../src/dev/temporal-dev-server';
import { median } from '../lib/load';
import { runBenchmark } from '../lib/run';
import { startBenchTemporal } from '../lib/service';
import { noopRunsPerSecond } from './noop-baseline';

const RUNS = Number(process.env.BENCH_RUNS ?? 1500);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 32);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);

const VARIANTS: Record<string, readonly string[]> = {
  'CLI defaults': [],
  'search-attribute cache refresh off': ['--dynamic-config-value', 'system.forceSearchAttributesCacheRefreshOnRead=false'],
  'eager activity execution': ['--dynamic-config-value', 'system.enableActivityEagerExecution=true'],
  'SQLite journal_mode=wal': ['--sqlite-pragma', 'journal_mode=wal'],
  'SQLite synchronous=2 (FULL)': ['--sqlite-pragma', 'synchronous=2'],
  'SQLite journal_mode=wal + synchronous=1 (NORMAL)': ['--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=1'],
  'npm start (all of the above as set)': DEV_SERVER_THROUGHPUT_ARGS,
};

async function measure(tuning: readonly string[]): Promise<number> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'delivery-bench-engine-'));
  const temporal = await startBenchTemporal(dataDir, tuning);
  try {
    return await noopRunsPerSecond(temporal.address, RUNS, IN_FLIGHT);
  } finally {
    await temporal.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  process.stdout.write(`${RUNS} no-op runs per measurement, ${IN_FLIGHT} in flight, ${ROUNDS} rounds\n`);
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(VARIANTS).map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round += 1) {
    const names = Object.keys(VARIANTS);
    for (const name of round % 2 === 0 ? names : names.reverse()) samples[name].push(await measure(VARIANTS[name]));
  }
  const baseline = median(samples['CLI defaults']);
  const results: Record<string, { runsPerSecond: number; ratio: number }> = {};
  for (const [name, values] of Object.entries(samples)) {
    const runsPerSecond = median(values);
    results[name] = { runsPerSecond: Number(runsPerSecond.toFixed(1)), ratio: Number((runsPerSecond / baseline).toFixed(2)) };
    process.stdout.write(`${name.padEnd(52)} ${runsPerSecond.toFixed(1).padStart(7)} runs/s  ${results[name].ratio}× the CLI defaults\n`);
  }
  process.stdout.write(`RESULT ${JSON.stringify({ runs: RUNS, inFlight: IN_FLIGHT, rounds: ROUNDS, variants: results })}\n`);
}

runBenchmark(main);
